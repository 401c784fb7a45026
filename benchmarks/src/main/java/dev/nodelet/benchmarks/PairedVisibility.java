package dev.nodelet.benchmarks;

import io.fabric8.kubernetes.api.model.ConfigMap;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.HdrHistogram.Histogram;

/**
 * The checker of measure 4 when two caches watch the same objects at once: every update is looked for in both, on
 * one thread, and each cache's latency is the time from sending the update to the first get of that cache that
 * returns it (or a newer version). Both caches then see the same updates, the same server and the same moments of the
 * machine, the JVM's warm-up and its GC pauses included; which cache is read first alternates from pass to pass.
 *
 * <p>Not thread-safe except {@link #sent}: one thread calls {@link #pass}.
 */
final class PairedVisibility {

  /** An answered update: the {@code index}-th sent. */
  record Update(int index, String name, long resourceVersion, long sentNanos) {
  }

  /** An update one or both caches have not shown yet. */
  private static final class Pending {
    final Update update;
    boolean seen0;
    boolean seen1;

    Pending(Update update) {
      this.update = update;
    }
  }

  private final List<Function<String, ConfigMap>> caches;
  private final List<Histogram> latencies;
  private final int skipped;
  private final Queue<Update> answered = new ConcurrentLinkedQueue<>();
  private final List<Pending> pending = new ArrayList<>();
  private boolean secondFirst;

  /**
   * @param first the get of the first cache
   * @param second the get of the second cache
   * @param skipped the updates not recorded: those of an index below it (the warm-up)
   * @param firstLatencies where the first cache's latencies go, in nanoseconds
   * @param secondLatencies the same for the second cache
   */
  PairedVisibility(Function<String, ConfigMap> first, Function<String, ConfigMap> second, int skipped,
      Histogram firstLatencies, Histogram secondLatencies) {
    this.caches = List.of(first, second);
    this.latencies = List.of(firstLatencies, secondLatencies);
    this.skipped = skipped;
  }

  /** An update was answered by the server; from any thread. */
  void sent(Update update) {
    answered.add(update);
  }

  /**
   * Reads every pending update once in each cache.
   *
   * @param clock the time source of the latencies ({@code System::nanoTime} but in tests)
   * @return whether an update is still pending in either cache
   */
  boolean pass(LongSupplier clock) {
    for (Update u; (u = answered.poll()) != null; ) {
      pending.add(new Pending(u));
    }
    secondFirst = !secondFirst;
    for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
      Pending p = it.next();
      for (int k = 0; k < 2; k++) {
        int cache = secondFirst ? 1 - k : k;
        if (cache == 0 ? p.seen0 : p.seen1) {
          continue;
        }
        ConfigMap cm = caches.get(cache).apply(p.update.name());
        if (cm != null && Long.parseLong(cm.getMetadata().getResourceVersion()) >= p.update.resourceVersion()) {
          long latency = clock.getAsLong() - p.update.sentNanos();
          if (cache == 0) {
            p.seen0 = true;
          } else {
            p.seen1 = true;
          }
          if (p.update.index() >= skipped) {
            latencies.get(cache).recordValue(latency);
          }
        }
      }
      if (p.seen0 && p.seen1) {
        it.remove();
      }
    }
    return !pending.isEmpty() || !answered.isEmpty();
  }
}
