package dev.nodelet.pods.internal;

import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/** Times as the API writes them: RFC 3339 in UTC, whole seconds. */
final class Times {

  private Times() {
  }

  static String format(Instant at) {
    return DateTimeFormatter.ISO_INSTANT.format(at.truncatedTo(ChronoUnit.SECONDS));
  }

  static Instant parse(String text) {
    return text == null || text.isEmpty() ? null : Instant.parse(text);
  }
}
