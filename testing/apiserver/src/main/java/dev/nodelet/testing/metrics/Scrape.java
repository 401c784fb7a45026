package dev.nodelet.testing.metrics;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a metrics test reads, as Prometheus would scrape it: the text of a collection, and the value of one series.
 * The Prometheus text format writer is the caller's dependency (every bundle with metrics has it for its tests).
 */
public final class Scrape {

  private Scrape() {
  }

  /** The Prometheus text of what {@code collect} returns now. */
  public static String text(Supplier<MetricSnapshots> collect) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      PrometheusTextFormatWriter.create().write(out, collect.get());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  /**
   * The value of {@code series}, the whole series name with its labels as written (e.g.
   * {@code nodelet_store_watch_open_watches{resource="configmaps"}}), or 0 if the scrape does not have it.
   */
  public static double value(Supplier<MetricSnapshots> collect, String series) {
    Matcher matcher = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(text(collect));
    return matcher.find() ? Double.parseDouble(matcher.group(1)) : 0;
  }
}
