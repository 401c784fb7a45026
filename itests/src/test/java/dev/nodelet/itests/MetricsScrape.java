package dev.nodelet.itests;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Scrapes the metrics endpoint from inside the container, with the JDK's plain HTTP client. */
final class MetricsScrape {

  private MetricsScrape() {
  }

  /** The text format, or an {@link UncheckedIOException} when nothing answers. */
  static String text(int port) {
    try {
      HttpURLConnection connection = (HttpURLConnection) new URL("http://127.0.0.1:" + port + "/metrics")
          .openConnection();
      connection.setConnectTimeout(2000);
      connection.setReadTimeout(10_000);
      if (connection.getResponseCode() != 200) {
        throw new IOException("/metrics answered " + connection.getResponseCode());
      }
      try (InputStream in = connection.getInputStream()) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The value of one series (name and labels as printed), or NaN if the scrape has none. */
  static double value(String text, String series) {
    Matcher matcher = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(text);
    return matcher.find() ? Double.parseDouble(matcher.group(1)) : Double.NaN;
  }

  static double value(int port, String series) {
    return value(text(port), series);
  }

  /** Whether a family has at least one sample in the scrape. */
  static boolean hasSamples(String text, String family) {
    return Pattern.compile("(?m)^" + Pattern.quote(family) + "(_total|_count|_bucket|_sum)?[{ ]").matcher(text)
        .find();
  }
}
