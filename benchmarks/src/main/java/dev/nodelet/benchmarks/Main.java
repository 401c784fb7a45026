package dev.nodelet.benchmarks;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Runs the benchmarks of docs/benchmarks.md and writes the results table.
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar [--smoke] [--only 1,3,5] [--out docs/benchmarks.md]
 *     [--json-dir benchmarks/target] [--prof gc|jfr|stack]
 * </pre>
 */
public final class Main {

  /** The verdict of a measure that failed to run. */
  static final String FAILED = "FAILED";

  /** The order in which the measures run: the cheap and most important first. */
  static final List<Integer> ORDER = List.of(1, 3, 9, 5, 6, 7, DraRestartHarness.MEASURE, 2, 4, 8,
      TransportHarness.MEASURE, RestartHarness.MEASURE, BudgetHarness.MEASURE, ProcessHarness.MEASURE,
      PodStartupHarness.MEASURE);

  private Main() {
  }

  public static void main(String[] args) {
    Settings settings = parse(args);
    Instant started = Instant.now();
    List<Row> rows = run(settings);
    Duration took = Duration.between(started, Instant.now());
    Report.write(settings, rows, took, String.join(" ", args));
    log("wrote %s (%d rows) in %s", settings.out(), rows.size(), took);
    // exit at once: fabric8's and Vert.x's pools may linger for a while
    System.exit(rows.stream().anyMatch(r -> FAILED.equals(r.met())) ? 1 : 0);
  }

  static List<Row> run(Settings settings) {
    List<Row> rows = new ArrayList<>();
    for (int measure : ORDER) {
      if (!settings.measures().contains(measure)) {
        continue;
      }
      log("measure %d ...", measure);
      long started = System.nanoTime();
      try {
        rows.addAll(measure(measure, settings));
      } catch (RuntimeException e) {
        // the other measures still run; the table shows the failure and the exit status is 1
        e.printStackTrace();
        rows.add(new Row(measure, "measure " + measure, "FAILED: " + e, "—", "—", FAILED));
      }
      // where a run's time goes (the smoke test's too)
      log("measure %d took %.1f s", measure, (System.nanoTime() - started) / 1e9);
    }
    rows.sort(Comparator.comparingInt(Row::measure));
    return rows;
  }

  private static List<Row> measure(int measure, Settings settings) {
    return switch (measure) {
      case 1 -> JmhMeasures.cachedGet(settings);
      case 2 -> FootprintHarness.run(settings.smoke());
      case 3 -> JmhMeasures.registerPod(settings);
      case 4 -> UpdateVisibilityHarness.run(settings.smoke());
      case 5 -> FanOutHarness.run(settings.smoke());
      case 6 -> DraHarness.run(settings.smoke());
      case 7 -> DraClaimsHarness.run(settings.smoke());
      case DraRestartHarness.MEASURE -> {
        List<Row> rows = new ArrayList<>(DraRestartHarness.run(settings.smoke()));
        rows.addAll(DraGrpcRestartHarness.run(settings.smoke()));
        yield rows;
      }
      case 8 -> PersistenceHarness.run(settings.smoke());
      case 9 -> JmhMeasures.metricsOverhead(settings);
      case TransportHarness.MEASURE -> TransportHarness.run(settings.smoke());
      case RestartHarness.MEASURE -> RestartHarness.run(settings.smoke());
      case BudgetHarness.MEASURE -> BudgetHarness.run(settings.smoke());
      case ProcessHarness.MEASURE -> ProcessHarness.run(settings);
      case PodStartupHarness.MEASURE -> PodStartupHarness.run(settings.smoke());
      default -> throw new IllegalArgumentException("no measure " + measure);
    };
  }

  static Settings parse(String[] args) {
    boolean smoke = false;
    Set<Integer> measures = new LinkedHashSet<>(ORDER);
    Path out = Path.of("docs", "benchmarks.md");
    Path jsonDir = Path.of("benchmarks", "target");
    Optional<String> profiler = Optional.empty();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--smoke" -> smoke = true;
        case "--only" -> measures = Arrays.stream(value(args, ++i).split(",")).map(String::trim)
            .map(Integer::valueOf).collect(Collectors.toCollection(LinkedHashSet::new));
        case "--out" -> out = Path.of(value(args, ++i));
        case "--json-dir" -> jsonDir = Path.of(value(args, ++i));
        case "--prof" -> profiler = Optional.of(value(args, ++i));
        default -> throw new IllegalArgumentException("unknown option " + args[i]
            + "; use [--smoke] [--only 1,3] [--out file.md] [--json-dir dir] [--prof name]");
      }
    }
    return new Settings(smoke, measures, out, jsonDir, profiler);
  }

  private static String value(String[] args, int i) {
    if (i >= args.length) {
      throw new IllegalArgumentException(args[i - 1] + " needs a value");
    }
    return args[i];
  }

  static void log(String format, Object... args) {
    System.out.println("[nodelet-benchmarks] " + String.format(Locale.ROOT, format, args));
    System.out.flush();
  }
}
