package dev.nodelet.benchmarks;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.stream.IntStream;
import org.HdrHistogram.Histogram;

/**
 * Measure 9's {@code registerPod}, both variants in one JVM: a manager and strategy without metrics and one with, as
 * in {@link MetricsOverheadBenchmark}, built side by side and called in alternating blocks of {@value #BLOCK} calls
 * (which variant leads swaps every pair), each call timed on its own. Both variants then share the heap, the GC, the
 * JIT's state and the machine's load of the same seconds: a p99 of a few microseconds moves with one pause or
 * descheduling per hundred calls, and in separate forks that run one after the other it measured those, not metrics.
 * As in the JMH benchmark, the pod is unregistered before each call, outside the timing.
 */
final class MetricsAlternation {

  static final int BLOCK = 1_000;

  /** The timed calls of the two variants. */
  record Result(Histogram off, Histogram on) {
  }

  private MetricsAlternation() {
  }

  static Result run(boolean smoke) {
    long warmupNanos = smoke ? 0 : 3_000_000_000L;
    long measureNanos = smoke ? 200_000_000L : 20_000_000_000L;
    Histogram off = new Histogram(10_000_000_000L, 3);
    Histogram on = new Histogram(10_000_000_000L, 3);
    Pod pod = Fixtures.pod("measured", "uid-measured", IntStream.range(0, 10).mapToObj(Fixtures::name).toList());
    try (SyncedManager without = new SyncedManager(MetricsOverheadBenchmark.OBJECTS, false);
        SyncedManager with = new SyncedManager(MetricsOverheadBenchmark.OBJECTS, true)) {
      alternate(without, with, pod, warmupNanos, new Histogram(10_000_000_000L, 3),
          new Histogram(10_000_000_000L, 3));
      alternate(without, with, pod, measureNanos, off, on);
    }
    return new Result(off, on);
  }

  private static void alternate(SyncedManager without, SyncedManager with, Pod pod, long forNanos, Histogram off,
      Histogram on) {
    long end = System.nanoTime() + forNanos;
    boolean offFirst = true;
    do {
      if (offFirst) {
        block(without, pod, off);
        block(with, pod, on);
      } else {
        block(with, pod, on);
        block(without, pod, off);
      }
      offFirst = !offFirst;
    } while (System.nanoTime() < end);
  }

  private static void block(SyncedManager variant, Pod pod, Histogram times) {
    for (int i = 0; i < BLOCK; i++) {
      long start = System.nanoTime();
      variant.manager.registerPod(pod);
      times.recordValue(System.nanoTime() - start);
      variant.manager.unregisterPod(pod);
    }
  }
}
