package dev.nodelet.objectcache.testing;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.apache.commons.io.output.TeeOutputStream;

/**
 * Captures what SLF4J's simple logger writes while open: it writes to whatever {@code System.err} is at the time of
 * each line. Lines of other threads during that time are captured too, which is what a test of "nothing logs X"
 * wants.
 */
public final class LogCapture implements AutoCloseable {

  private final PrintStream original = System.err;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

  public LogCapture() {
    // still shows the lines in the test output
    System.setErr(new PrintStream(new TeeOutputStream(original, captured), true, StandardCharsets.UTF_8));
  }

  /** @return everything written so far */
  public String text() {
    return captured.toString(StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    System.setErr(original);
  }
}
