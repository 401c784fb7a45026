package dev.nodelet.launcher;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The launcher's logging configuration: PID {@value #PID} of pax-logging (log4j2 properties), as in Karaf, so the
 * level of any package changes at runtime through Config Admin, e.g. {@code log4j2.logger.kube.name =
 * dev.nodelet.kube} and {@code log4j2.logger.kube.level = DEBUG} in {@code etc/org.ops4j.pax.logging.cfg}. Lines go
 * to standard error, as text or as one JSON object per line.
 */
final class LauncherLogging {

  static final String PID = "org.ops4j.pax.logging";

  /** The JSON of a line: time, level, logger, thread, message and the stack trace of an exception, if any. */
  static final String JSON_TEMPLATE = "{\"time\":{\"$resolver\":\"timestamp\",\"pattern\":{\"format\":"
      + "\"yyyy-MM-dd'T'HH:mm:ss.SSS'Z'\",\"timeZone\":\"UTC\"}},"
      + "\"level\":{\"$resolver\":\"level\",\"field\":\"name\"},"
      + "\"logger\":{\"$resolver\":\"logger\",\"field\":\"name\"},"
      + "\"thread\":{\"$resolver\":\"thread\",\"field\":\"name\"},"
      + "\"msg\":{\"$resolver\":\"message\",\"stringified\":true},"
      + "\"error\":{\"$resolver\":\"exception\",\"field\":\"stackTrace\",\"stackTrace\":{\"stringified\":true}}}";

  private LauncherLogging() {
  }

  /**
   * @param json one JSON object per line instead of text
   * @param quiet loggers kept at ERROR: they repeat every failed attempt with its stack trace
   */
  static Map<String, Object> configuration(boolean json, List<String> quiet) {
    Map<String, Object> config = new LinkedHashMap<>();
    config.put("log4j2.rootLogger.level", "INFO");
    config.put("log4j2.rootLogger.appenderRef.stderr.ref", "stderr");
    config.put("log4j2.appender.stderr.type", "Console");
    config.put("log4j2.appender.stderr.name", "stderr");
    config.put("log4j2.appender.stderr.target", "SYSTEM_ERR");
    if (json) {
      config.put("log4j2.appender.stderr.layout.type", "JsonTemplateLayout");
      config.put("log4j2.appender.stderr.layout.eventTemplate", JSON_TEMPLATE);
    } else {
      config.put("log4j2.appender.stderr.layout.type", "PatternLayout");
      config.put("log4j2.appender.stderr.layout.pattern", "[%t] %level %c - %msg%n%throwable");
    }
    for (int i = 0; i < quiet.size(); i++) {
      config.put("log4j2.logger.quiet" + i + ".name", quiet.get(i));
      config.put("log4j2.logger.quiet" + i + ".level", "ERROR");
    }
    // SPI Fly reports every provider it registers at INFO
    config.put("log4j2.logger.spifly.name", "org.apache.aries.spifly");
    config.put("log4j2.logger.spifly.level", "WARN");
    return config;
  }
}
