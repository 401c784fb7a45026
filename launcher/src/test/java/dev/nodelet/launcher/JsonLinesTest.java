package dev.nodelet.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class JsonLinesTest {

  @Test
  void everyLineBecomesOneJsonObjectInTheShapeOfTheLogLines() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream target = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    try (PrintStream lines = JsonLines.printStream(target, "INFO")) {
      lines.println("Embedded Kubernetes API server listening on http://127.0.0.1:6443");
      lines.print("Nodelet ready: \"node-a\"");
      lines.print(" \u00e9\tand more\r\n");
      lines.print("an unfinished line");
      assertThat(bytes.toString(StandardCharsets.UTF_8).lines()).as("an unfinished line waits").hasSize(2);
    }

    List<String> out = bytes.toString(StandardCharsets.UTF_8).lines().toList();
    assertThat(out).hasSize(3);
    ObjectMapper json = new ObjectMapper();
    JsonNode first = json.readTree(out.get(0));
    assertThat(first.fieldNames()).toIterable().containsExactly("time", "level", "logger", "thread", "msg");
    assertThat(first.get("time").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");
    assertThat(first.get("level").asText()).isEqualTo("INFO");
    assertThat(first.get("logger").asText()).isEqualTo("dev.nodelet.launcher");
    assertThat(first.get("thread").asText()).isEqualTo(Thread.currentThread().getName());
    assertThat(first.get("msg").asText())
        .isEqualTo("Embedded Kubernetes API server listening on http://127.0.0.1:6443");
    assertThat(json.readTree(out.get(1)).get("msg").asText()).isEqualTo("Nodelet ready: \"node-a\" \u00e9\tand more");
    assertThat(json.readTree(out.get(2)).get("msg").asText()).isEqualTo("an unfinished line");
  }

  @Test
  void quotesBackslashesAndControlCharactersAreEscapedOnOneLine() throws Exception {
    String message = "a \"quoted\" C:\\path \u0001\u001f\b\f\nsecond line\r\t\u00e9 \ud83d\ude00 </a>";
    String line = JsonLines.json(Instant.EPOCH, "WARN", "some.logger", "main", message, "trace\n\tat x");
    assertThat(line).doesNotContain("\n", "\r").startsWith("{\"time\":\"1970-01-01T00:00:00.000Z\",");
    JsonNode node = new ObjectMapper().readTree(line);
    assertThat(node.get("msg").asText()).isEqualTo(message);
    assertThat(node.get("error").asText()).isEqualTo("trace\n\tat x");
    assertThat(node.get("level").asText()).isEqualTo("WARN");
    assertThat(new ObjectMapper().readTree(JsonLines.json(Instant.EPOCH, "INFO", "l", "t", null, null))
        .get("msg").isNull()).isTrue();
  }

  @Test
  void javaLoggingRecordsBecomeJsonLinesWithTheLevelNamesOfTheLogLines() throws Exception {
    java.util.logging.Logger root = java.util.logging.LogManager.getLogManager().getLogger("");
    java.util.logging.Handler[] before = root.getHandlers();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try {
      JsonLines.routeJavaLogging(new PrintStream(bytes, true, StandardCharsets.UTF_8));
      java.util.logging.Logger logger = java.util.logging.Logger.getLogger("okhttp3.mockwebserver.MockWebServer");
      logger.log(java.util.logging.Level.WARNING, "connection from {0} failed",
          new Object[] {"127.0.0.1"});
      logger.log(java.util.logging.Level.SEVERE, "stopped", new IllegalStateException("boom"));
    } finally {
      for (java.util.logging.Handler handler : root.getHandlers()) {
        root.removeHandler(handler);
      }
      for (java.util.logging.Handler handler : before) {
        root.addHandler(handler);
      }
    }

    List<String> out = bytes.toString(StandardCharsets.UTF_8).lines().toList();
    assertThat(out).hasSize(2);
    ObjectMapper json = new ObjectMapper();
    JsonNode warning = json.readTree(out.get(0));
    assertThat(warning.get("level").asText()).isEqualTo("WARN");
    assertThat(warning.get("logger").asText()).isEqualTo("okhttp3.mockwebserver.MockWebServer");
    assertThat(warning.get("msg").asText()).isEqualTo("connection from 127.0.0.1 failed");
    assertThat(warning.has("error")).isFalse();
    JsonNode severe = json.readTree(out.get(1));
    assertThat(severe.get("level").asText()).isEqualTo("ERROR");
    assertThat(severe.get("error").asText()).startsWith("java.lang.IllegalStateException: boom");
  }
}
