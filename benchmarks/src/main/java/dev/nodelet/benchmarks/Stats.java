package dev.nodelet.benchmarks;

import java.util.Arrays;
import java.util.Locale;
import java.util.function.ToDoubleFunction;
import java.util.List;

/** Formatting and the median over repeated rounds. */
final class Stats {

  private Stats() {
  }

  /** The median of the rounds' values, and their range when there is more than one. */
  static <R> String medianRange(List<R> rounds, ToDoubleFunction<R> value, String unit) {
    double[] values = rounds.stream().mapToDouble(value).sorted().toArray();
    String median = fmt(median(values)) + " " + unit;
    if (values.length < 2) {
      return median;
    }
    return median + " (" + fmt(values[0]) + "–" + fmt(values[values.length - 1]) + ", " + values.length
        + " runs)";
  }

  static <R> double median(List<R> rounds, ToDoubleFunction<R> value) {
    return median(rounds.stream().mapToDouble(value).sorted().toArray());
  }

  static double median(double[] sorted) {
    double[] v = sorted.clone();
    Arrays.sort(v);
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  static String fmt(double v) {
    double a = Math.abs(v);
    if (a >= 100) {
      return String.format(Locale.ROOT, "%.0f", v);
    }
    if (a >= 10) {
      return String.format(Locale.ROOT, "%.1f", v);
    }
    return String.format(Locale.ROOT, "%.2f", v);
  }

  static double ms(long nanos) {
    return nanos / 1e6;
  }

  static double us(long nanos) {
    return nanos / 1e3;
  }
}
