package dev.nodelet.objectcache.testing;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Captures what SLF4J's simple logger writes while open: it writes to whatever {@code System.err} is at the time of
 * each line. Lines of other threads during that time are captured too, which is what a test of "nothing logs X"
 * wants.
 */
public final class LogCapture implements AutoCloseable {

  private final PrintStream original = System.err;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

  public LogCapture() {
    System.setErr(new PrintStream(new TeeStream(original, captured), true, StandardCharsets.UTF_8));
  }

  /** @return everything written so far */
  public String text() {
    synchronized (captured) {
      return captured.toString(StandardCharsets.UTF_8);
    }
  }

  @Override
  public void close() {
    System.setErr(original);
  }

  /** Still shows the lines in the test output. */
  private static final class TeeStream extends java.io.OutputStream {
    private final PrintStream console;
    private final ByteArrayOutputStream copy;

    TeeStream(PrintStream console, ByteArrayOutputStream copy) {
      this.console = console;
      this.copy = copy;
    }

    @Override
    public void write(int b) {
      console.write(b);
      synchronized (copy) {
        copy.write(b);
      }
    }

    @Override
    public void write(byte[] b, int off, int len) {
      console.write(b, off, len);
      synchronized (copy) {
        copy.write(b, off, len);
      }
    }
  }
}
