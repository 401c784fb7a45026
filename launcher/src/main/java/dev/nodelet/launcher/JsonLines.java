package dev.nodelet.launcher;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * The launcher's own console lines as JSON objects, in the shape of its JSON log lines ({@code time}, {@code level},
 * {@code logger}, {@code thread}, {@code msg}): with {@code --log-format json} every line on standard output and
 * error is one JSON object, also those printed before pax-logging starts and beside it.
 */
final class JsonLines extends OutputStream {

  static final String LOGGER = "dev.nodelet.launcher";
  // the format of LauncherLogging.JSON_TEMPLATE
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")
      .withZone(ZoneOffset.UTC);

  /**
   * Sends what the launcher's own class path logs through {@code java.util.logging} (the embedded API server, SPI
   * Fly) to {@code target} as JSON lines instead of the JDK's two-line text.
   */
  static void routeJavaLogging(PrintStream target) {
    Logger root = LogManager.getLogManager().getLogger("");
    for (Handler handler : root.getHandlers()) {
      root.removeHandler(handler);
    }
    root.addHandler(new JavaLoggingHandler(target));
  }

  private final PrintStream target;
  private final String level;
  private final ByteArrayOutputStream line = new ByteArrayOutputStream();

  private JsonLines(PrintStream target, String level) {
    this.target = target;
    this.level = level;
  }

  /**
   * @param target where the JSON lines go
   * @param level the level of every line, e.g. {@code INFO}
   * @return a stream that writes each line printed to it as one JSON object to {@code target}
   */
  static PrintStream printStream(PrintStream target, String level) {
    return new PrintStream(new JsonLines(target, level), true, StandardCharsets.UTF_8);
  }

  /**
   * @param error the stack trace of the line's exception; null for none
   * @return one line as a JSON object, without the line end
   */
  static String json(Instant time, String level, String logger, String thread, String message, String error) {
    Map<String, String> entry = new LinkedHashMap<>();
    entry.put("time", TIME.format(time));
    entry.put("level", level);
    entry.put("logger", logger);
    entry.put("thread", thread);
    entry.put("msg", message);
    if (error != null) {
      entry.put("error", error);
    }
    // by hand: a JSON library on the launcher's class path would be opened and loaded in every mode for this
    StringBuilder json = new StringBuilder("{");
    entry.forEach((key, value) -> {
      if (json.length() > 1) {
        json.append(',');
      }
      quote(json, key).append(':');
      quote(json, value);
    });
    return json.append('}').toString();
  }

  /** Appends {@code value} as a JSON string (RFC 8259: quote, backslash and control characters escaped), or null. */
  private static StringBuilder quote(StringBuilder json, String value) {
    if (value == null) {
      return json.append("null");
    }
    json.append('"');
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '"' -> json.append("\\\"");
        case '\\' -> json.append("\\\\");
        case '\n' -> json.append("\\n");
        case '\r' -> json.append("\\r");
        case '\t' -> json.append("\\t");
        default -> {
          if (c < 0x20) {
            json.append(String.format("\\u%04x", (int) c));
          } else {
            json.append(c);
          }
        }
      }
    }
    return json.append('"');
  }

  @Override
  public synchronized void write(int b) {
    if (b == '\n') {
      endLine();
    } else {
      line.write(b);
    }
  }

  @Override
  public synchronized void write(byte[] bytes, int offset, int length) {
    for (int i = offset; i < offset + length; i++) {
      write(bytes[i]);
    }
  }

  @Override
  public synchronized void flush() {
    // a line is written once it ends; a partial one waits for its end
    target.flush();
  }

  @Override
  public synchronized void close() {
    if (line.size() > 0) {
      endLine();
    }
    target.flush();
  }

  private void endLine() {
    String message = line.toString(StandardCharsets.UTF_8);
    line.reset();
    if (message.endsWith("\r")) {
      message = message.substring(0, message.length() - 1);
    }
    target.println(json(Instant.now(), level, LOGGER, Thread.currentThread().getName(), message, null));
  }

  /** One JSON line per {@code java.util.logging} record, with the level names of the log lines. */
  private static final class JavaLoggingHandler extends Handler {
    private final PrintStream target;

    JavaLoggingHandler(PrintStream target) {
      this.target = target;
      setFormatter(new SimpleFormatter());
    }

    @Override
    public void publish(LogRecord record) {
      if (!isLoggable(record)) {
        return;
      }
      String error = null;
      if (record.getThrown() != null) {
        StringWriter trace = new StringWriter();
        record.getThrown().printStackTrace(new PrintWriter(trace));
        error = trace.toString();
      }
      // formatMessage fills in the record's parameters; publish runs in the thread that logs
      target.println(json(record.getInstant(), level(record.getLevel()), String.valueOf(record.getLoggerName()),
          Thread.currentThread().getName(), getFormatter().formatMessage(record), error));
    }

    private static String level(Level level) {
      int value = level.intValue();
      if (value >= Level.SEVERE.intValue()) {
        return "ERROR";
      }
      if (value >= Level.WARNING.intValue()) {
        return "WARN";
      }
      if (value >= Level.INFO.intValue()) {
        return "INFO";
      }
      return value >= Level.FINE.intValue() ? "DEBUG" : "TRACE";
    }

    @Override
    public void flush() {
      target.flush();
    }

    @Override
    public void close() {
      flush();
    }
  }
}
