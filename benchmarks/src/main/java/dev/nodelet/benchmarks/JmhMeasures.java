package dev.nodelet.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.HdrHistogram.Histogram;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Measures 1, 3 and 9, run with JMH; the raw results go to {@code <json dir>/jmh-measure<n>.json} (measure 3 in three
 * runs, {@code jmh-measure3-<references>-<pace>.json}).
 */
final class JmhMeasures {

  private JmhMeasures() {
  }

  static List<Row> cachedGet(Settings settings) {
    ChainedOptionsBuilder options = options(settings, CachedGetBenchmark.class, 1);
    if (!settings.smoke()) {
      options.forks(2).warmupIterations(3).warmupTime(TimeValue.seconds(1))
          .measurementIterations(5).measurementTime(TimeValue.seconds(1));
    }
    Collection<RunResult> results = run(options);
    Result<?> nodelet = primary(results, "nodeletGet", null);
    Result<?> informer = primary(results, "informerStoreGet", null);
    Result<?> map = primary(results, "bareMapGet", null);
    double n = median(nodelet);
    double i = median(informer);
    double m = median(map);
    Main.log("cached get: nodelet %.1f ns, informer %.1f ns, map %.1f ns", n, i, m);
    return List.of(new Row(1, "cached get of a watched, synced object (" + CachedGetBenchmark.OBJECTS
            + " objects, read in turn; 1 thread)", withError(nodelet) + " (" + Stats.fmt(n / m) + "× the map)",
        "informer store lookup " + withError(informer) + "; bare ConcurrentHashMap.get " + withError(map),
        "—", "—")); // no target: the row compares the store with the informer and the bare map
  }

  /** The variants of measure 3: which references the pod has, and how the calls follow each other. */
  private record Variant(String references, String pace, String what, boolean target) {
    String label() {
      return references + "-" + pace;
    }
  }

  private static final List<Variant> VARIANTS = List.of(
      new Variant("shared", "back-to-back", "objects already watched for another pod", true),
      new Variant("new", "back-to-back", "first references: each starts a watch; calls back to back", true),
      // a cold call: no target, the row shows what the caches of a node at rest add
      new Variant("new", "at-rest", "first references: each starts a watch; each call on a node at rest, its "
          + "10 watches opened and closed before the next", false));

  static List<Row> registerPod(Settings settings) {
    // each trial writes there how many registrations it ran and how many watches they started
    Path proofDir = settings.jsonDir().toAbsolutePath();
    System.setProperty(RegisterPodBenchmark.PROOF_DIR, proofDir.toString());
    List<RunResult> results = new ArrayList<>();
    for (Variant variant : VARIANTS) {
      ChainedOptionsBuilder options = options(settings, RegisterPodBenchmark.class, "3-" + variant.label())
          .param("references", variant.references()).param("pace", variant.pace())
          .jvmArgsAppend("-D" + RegisterPodBenchmark.PROOF_DIR + "=" + proofDir);
      if (!settings.smoke() && "back-to-back".equals(variant.pace())) {
        options.forks(1).warmupIterations(2).warmupTime(TimeValue.seconds(1))
            .measurementIterations(5).measurementTime(TimeValue.seconds(1));
      } else if (!settings.smoke()) {
        // a call is sampled once the previous call's watches have opened and closed again (5-50 ms): 150 s gave
        // its p99 6,000-60,000 samples
        options.forks(1).warmupIterations(2).warmupTime(TimeValue.seconds(5))
            .measurementIterations(5).measurementTime(TimeValue.seconds(30));
      }
      results.addAll(run(options));
    }
    List<Row> rows = new ArrayList<>();
    for (Variant variant : VARIANTS) {
      for (String server : List.of("reachable", "unreachable")) {
        Result<?> r = primary(results, "registerPod",
            "pace=" + variant.pace() + ",references=" + variant.references() + ",server=" + server);
        var s = r.getStatistics();
        double p99 = s.getPercentile(99);
        rows.add(new Row(3, "registerPod, 10 references (" + variant.what() + "), API server " + server,
            "p50 " + Stats.fmt(s.getPercentile(50)) + " µs, p99 " + Stats.fmt(p99) + " µs, p99.9 "
                + Stats.fmt(s.getPercentile(99.9)) + " µs, max " + Stats.fmt(s.getMax()) + " µs (" + s.getN()
                + " samples; " + proof(proofDir, variant, server) + ")",
            "—", variant.target() ? "p99 ≤ 20 µs, the same when unreachable" : "—",
            variant.target() ? Row.verdict(p99 <= 20) : "—"));
        Main.log("registerPod %s/%s: p50 %.2f µs p99 %.2f µs", variant.label(), server, s.getPercentile(50), p99);
      }
    }
    return rows;
  }

  /** What the trial of a variant of measure 3 wrote of its registrations and the watches they started. */
  private static String proof(Path dir, Variant variant, String server) {
    Path file = dir.resolve(RegisterPodBenchmark.proofFile(variant.references(), variant.pace(), server));
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException("the trial of measure 3 wrote no " + file, e);
    }
  }

  /** The overhead of metrics on the cached get (as measure 1) and on {@code registerPod} (as measure 3, shared). */
  static List<Row> metricsOverhead(Settings settings) {
    ChainedOptionsBuilder options = options(settings, MetricsOverheadBenchmark.class, 9);
    if (!settings.smoke()) {
      options.forks(2).warmupIterations(3).warmupTime(TimeValue.seconds(1))
          .measurementIterations(5).measurementTime(TimeValue.seconds(1));
    }
    Collection<RunResult> results = run(options);
    Result<?> getOff = primary(results, "get", "metrics=off");
    Result<?> getOn = primary(results, "get", "metrics=on");
    double off = median(getOff);
    double on = median(getOn);
    Main.log("metrics overhead, get: off %.1f ns, on %.1f ns", off, on);
    // registerPod in separate forks, one variant after the other, as JMH runs them: shown, not judged
    var forkedOff = primary(results, "registerPod", "metrics=off").getStatistics();
    var forkedOn = primary(results, "registerPod", "metrics=on").getStatistics();
    Main.log("metrics overhead, registerPod in separate forks: p50 off %.2f µs, on %.2f µs; p99 off %.2f µs, on %.2f"
        + " µs", forkedOff.getPercentile(50) / 1000, forkedOn.getPercentile(50) / 1000,
        forkedOff.getPercentile(99) / 1000, forkedOn.getPercentile(99) / 1000);
    // judged: both variants in one JVM, alternating (MetricsAlternation)
    MetricsAlternation.Result alternated = MetricsAlternation.run(settings.smoke());
    Histogram registerOff = alternated.off();
    Histogram registerOn = alternated.on();
    double p50Off = Stats.us(registerOff.getValueAtPercentile(50));
    double p50On = Stats.us(registerOn.getValueAtPercentile(50));
    double p99Off = Stats.us(registerOff.getValueAtPercentile(99));
    double p99On = Stats.us(registerOn.getValueAtPercentile(99));
    Main.log("metrics overhead, registerPod alternating in one JVM: p50 off %.2f µs, on %.2f µs; p99 off %.2f µs, on"
        + " %.2f µs", p50Off, p50On, p99Off, p99On);
    return List.of(
        new Row(9, "metrics on: cached get (as measure 1)", withError(getOn) + " (" + change(on, off) + ")",
            "metrics off " + withError(getOff), "≤ 10 % over metrics off", Row.verdict(on <= 1.1 * off)),
        new Row(9, "metrics on: registerPod, 10 references already watched (as measure 3; both variants in one JVM,"
            + " alternating blocks of " + MetricsAlternation.BLOCK + " calls)",
            "p50 " + Stats.fmt(p50On) + " µs (" + change(p50On, p50Off) + "), p99 " + Stats.fmt(p99On) + " µs ("
                + change(p99On, p99Off) + ") (" + registerOn.getTotalCount() + " calls); in a JMH fork of its own: p50 "
                + Stats.fmt(forkedOn.getPercentile(50) / 1000) + " µs, p99 "
                + Stats.fmt(forkedOn.getPercentile(99) / 1000) + " µs",
            "metrics off: p50 " + Stats.fmt(p50Off) + " µs, p99 " + Stats.fmt(p99Off) + " µs ("
                + registerOff.getTotalCount() + " calls); in a JMH fork of its own: p50 "
                + Stats.fmt(forkedOff.getPercentile(50) / 1000) + " µs, p99 "
                + Stats.fmt(forkedOff.getPercentile(99) / 1000) + " µs",
            "p50 and p99 ≤ 10 % over metrics off", Row.verdict(p50On <= 1.1 * p50Off && p99On <= 1.1 * p99Off)));
  }

  private static String change(double value, double base) {
    double percent = 100 * (value - base) / base;
    return (percent >= 0 ? "+" : "−") + Stats.fmt(Math.abs(percent)) + " %";
  }

  private static ChainedOptionsBuilder options(Settings settings, Class<?> benchmark, Object measure) {
    ChainedOptionsBuilder options = new OptionsBuilder()
        .include("^" + benchmark.getName().replace(".", "\\.") + "\\.")
        .shouldFailOnError(true)
        .resultFormat(ResultFormatType.JSON)
        .result(jsonFile(settings, measure).toString());
    settings.profiler().ifPresent(options::addProfiler);
    if (settings.smoke()) {
      options.forks(0).warmupIterations(0).measurementIterations(1)
          .measurementTime(TimeValue.milliseconds(200));
    }
    return options;
  }

  private static Path jsonFile(Settings settings, Object measure) {
    try {
      Files.createDirectories(settings.jsonDir());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return settings.jsonDir().resolve("jmh-measure" + measure + ".json");
  }

  private static Collection<RunResult> run(ChainedOptionsBuilder options) {
    try {
      return new Runner(options.build()).run();
    } catch (RunnerException e) {
      throw new IllegalStateException("JMH failed: " + e.getMessage(), e);
    }
  }

  private static Result<?> primary(Collection<RunResult> results, String method, String params) {
    return results.stream()
        .filter(r -> r.getParams().getBenchmark().endsWith("." + method))
        .filter(r -> params == null || params.equals(paramString(r)))
        .findFirst().orElseThrow(() -> new IllegalStateException("no result for " + method + " " + params))
        .getPrimaryResult();
  }

  private static String paramString(RunResult r) {
    List<String> parts = new ArrayList<>();
    for (String key : r.getParams().getParamsKeys()) {
      parts.add(key + "=" + r.getParams().getParam(key));
    }
    parts.sort(null);
    return String.join(",", parts);
  }

  /** The median of the iteration scores. */
  private static double median(Result<?> r) {
    return r.getStatistics().getN() > 1 ? r.getStatistics().getPercentile(50) : r.getScore();
  }

  private static String withError(Result<?> r) {
    String median = "median " + Stats.fmt(median(r)) + " " + r.getScoreUnit();
    double error = r.getScoreError();
    if (Double.isNaN(error)) {
      return median;
    }
    return median + " (mean " + Stats.fmt(r.getScore()) + " ± " + Stats.fmt(error) + ", 99.9% CI, "
        + r.getStatistics().getN() + " iterations)";
  }
}
