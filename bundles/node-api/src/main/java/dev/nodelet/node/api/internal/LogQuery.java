package dev.nodelet.node.api.internal;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The query of {@code /containerLogs}, the kubelet's {@code PodLogOptions}: {@code follow}, {@code previous},
 * {@code timestamps}, {@code sinceSeconds}, {@code sinceTime}, {@code tailLines}, {@code limitBytes}.
 *
 * @param since the oldest record wanted, null for all
 * @param tailLines how many of the newest lines, -1 for all
 * @param limitBytes how many bytes at most, -1 for no limit
 */
record LogQuery(boolean follow, boolean previous, boolean timestamps, Instant since, long tailLines,
    long limitBytes) {

  private static final Set<String> KNOWN = Set.of("follow", "previous", "timestamps", "sinceSeconds", "sinceTime",
      "tailLines", "limitBytes", "container", "insecureSkipTLSVerifyBackend");

  /**
   * @throws IllegalArgumentException naming the parameter that is wrong and what it takes
   */
  static LogQuery parse(String rawQuery, Clock clock) {
    Map<String, String> params = new HashMap<>();
    if (rawQuery != null && !rawQuery.isEmpty()) {
      for (String pair : rawQuery.split("&")) {
        int eq = pair.indexOf('=');
        String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
        String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
        if (!KNOWN.contains(key)) {
          throw new IllegalArgumentException("unknown query parameter " + key + ": use follow, previous, timestamps, "
              + "sinceSeconds, sinceTime, tailLines or limitBytes");
        }
        params.put(key, value);
      }
    }
    if (params.containsKey("sinceSeconds") && params.containsKey("sinceTime")) {
      throw new IllegalArgumentException("at most one of sinceTime or sinceSeconds may be specified");
    }
    Instant since = null;
    if (params.containsKey("sinceSeconds")) {
      since = clock.instant().minusSeconds(positive(params, "sinceSeconds"));
    } else if (params.containsKey("sinceTime")) {
      try {
        since = DateTimeFormatter.ISO_OFFSET_DATE_TIME.parse(params.get("sinceTime"), Instant::from);
      } catch (DateTimeParseException e) {
        throw new IllegalArgumentException("sinceTime must be an RFC 3339 time such as 2026-01-02T15:04:05Z, not "
            + params.get("sinceTime"));
      }
    }
    long tail = params.containsKey("tailLines") ? number(params, "tailLines", 0) : -1;
    long limit = params.containsKey("limitBytes") ? positive(params, "limitBytes") : -1;
    return new LogQuery(bool(params, "follow"), bool(params, "previous"), bool(params, "timestamps"), since, tail,
        limit);
  }

  /** The lines of a container's log this query selects, in order. */
  List<LogLine> select(List<LogLine> lines) {
    List<LogLine> chosen = since == null ? lines
        : lines.stream().filter(line -> !line.time().isBefore(since)).toList();
    if (tailLines >= 0 && chosen.size() > tailLines) {
      chosen = chosen.subList(chosen.size() - (int) tailLines, chosen.size());
    }
    return chosen;
  }

  /** A line as served: with its RFC 3339 time first when {@code timestamps} is asked, and its end of line. */
  String render(LogLine line) {
    return timestamps ? DateTimeFormatter.ISO_INSTANT.format(line.time()) + " " + line.text() + "\n"
        : line.text() + "\n";
  }

  private static boolean bool(Map<String, String> params, String key) {
    String value = params.get(key);
    if (value == null) {
      return false;
    }
    // Go's strconv.ParseBool, which the kubelet uses; a bare "follow" means true
    return switch (value) {
      case "", "1", "t", "T", "true", "TRUE", "True" -> true;
      case "0", "f", "F", "false", "FALSE", "False" -> false;
      default -> throw new IllegalArgumentException(key + " must be true or false, not " + value);
    };
  }

  private static long positive(Map<String, String> params, String key) {
    return number(params, key, 1);
  }

  private static long number(Map<String, String> params, String key, long min) {
    try {
      long value = Long.parseLong(params.get(key));
      if (value >= min) {
        return value;
      }
    } catch (NumberFormatException e) {
      // answered below
    }
    throw new IllegalArgumentException(key + " must be an integer of at least " + min + ", not " + params.get(key));
  }
}
