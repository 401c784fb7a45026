package dev.nodelet.benchmarks;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import org.HdrHistogram.Histogram;

/**
 * Measure 4: 1,000 watched objects, 200 updates/s to random ones through another client; the latency from sending an
 * update to the first get that returns it (or a newer version). The API server runs in a child JVM. The watch strategy
 * and one informer per object watch the same objects at the same time, each on a client of its own, and one checker
 * thread looks for every update in both every 50 µs ({@link PairedVisibility}): both sides are timed on the same
 * updates at the same moments. After 3 s of updates not counted, 15 s are.
 *
 * <p>{@link #measure} times one kind of cache alone, for the measures that compare variants of the watch strategy.
 */
final class UpdateVisibilityHarness {

  static final int RATE = 200;
  /** The updates of the warm-up, not counted. */
  private static final int WARMUP_UPDATES = 3 * RATE;

  private record Pending(String name, long resourceVersion, long sentNanos) {
  }

  private UpdateVisibilityHarness() {
  }

  static List<Row> run(boolean smoke) {
    int count = smoke ? 50 : 1000;
    int seconds = smoke ? 1 : 15;
    int warmup = smoke ? RATE : WARMUP_UPDATES;
    Histogram nodelet = new Histogram(60_000_000_000L, 3);
    Histogram informers = new Histogram(60_000_000_000L, 3);
    try (ApiServerProcess server = ApiServerProcess.start();
        KubernetesClient admin = Watched.client(server)) {
      Fixtures.createConfigMaps(admin, 0, count);
      try (Watched watchStrategy = Watched.nodelet(server).watch(count);
          Watched informed = Watched.informers(server).watch(count)) {
        PairedVisibility checker = new PairedVisibility(watchStrategy::get, informed::get, warmup, nodelet,
            informers);
        sendAndCheck(admin, count, warmup + RATE * seconds, checker);
      }
    }
    Main.log("update→get: watch strategy p50 %.2f ms p99 %.2f ms; informers p50 %.2f ms p99 %.2f ms",
        Stats.ms(nodelet.getValueAtPercentile(50)), Stats.ms(nodelet.getValueAtPercentile(99)),
        Stats.ms(informers.getValueAtPercentile(50)), Stats.ms(informers.getValueAtPercentile(99)));
    double p99 = Stats.ms(nodelet.getValueAtPercentile(99));
    return List.of(new Row(4, "update on the server → visible to get, " + count + " watched objects, " + RATE
        + " updates/s for " + seconds + " s, both sides watching the same updates at once", describe(nodelet),
        describe(informers) + " (one informer per object)", "p99 ≤ 50 ms", Row.verdict(p99 <= 50)));
  }

  /** Sends the updates from this thread while another runs the checker's passes every 50 µs until all are seen. */
  private static void sendAndCheck(KubernetesClient admin, int count, int updates, PairedVisibility checker) {
    AtomicBoolean sending = new AtomicBoolean(true);
    Thread thread = new Thread(() -> {
      while (true) {
        boolean more = sending.get(); // read first: every update sent before it turned false is then in the pass
        if (!checker.pass(System::nanoTime) && !more) {
          return;
        }
        LockSupport.parkNanos(50_000);
      }
    }, "visibility-checker");
    thread.setDaemon(true); // a side that never shows an update must not keep the JVM after the join gives up
    thread.start();
    int[] index = {0};
    try {
      new UpdateLoad(admin).run(count, RATE, updates, name -> {
        int i = index[0]++;
        return (resourceVersion, sentNanos) -> checker.sent(
            new PairedVisibility.Update(i, name, resourceVersion, sentNanos));
      });
    } finally {
      sending.set(false);
    }
    try {
      thread.join(60_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static String describe(Histogram h) {
    return "p50 " + Stats.fmt(Stats.ms(h.getValueAtPercentile(50))) + " ms, p99 "
        + Stats.fmt(Stats.ms(h.getValueAtPercentile(99))) + " ms, max " + Stats.fmt(Stats.ms(h.getMaxValue()))
        + " ms (" + h.getTotalCount() + " updates)";
  }

  static Histogram measure(ApiServerProcess server, KubernetesClient admin, int count, int seconds,
      Function<ApiServerProcess, Watched> kind) {
    return measureUpdates(server, admin, count, RATE * seconds, kind);
  }

  /** Watches the objects, then sends one second of updates not counted and {@code updates} counted ones. */
  static Histogram measureUpdates(ApiServerProcess server, KubernetesClient admin, int count, int updates,
      Function<ApiServerProcess, Watched> kind) {
    try (Watched watched = kind.apply(server).watch(count)) {
      UpdateLoad load = new UpdateLoad(admin);
      Histogram histogram = new Histogram(60_000_000_000L, 3);
      ConcurrentLinkedQueue<Pending> sent = new ConcurrentLinkedQueue<>();
      AtomicBoolean sending = new AtomicBoolean(true);
      int warmup = RATE; // the first second is not recorded
      Thread checker = new Thread(() -> {
        List<Pending> pending = new ArrayList<>();
        int seen = 0;
        while (sending.get() || !pending.isEmpty() || !sent.isEmpty()) {
          for (Pending p; (p = sent.poll()) != null; ) {
            pending.add(p);
          }
          for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
            Pending p = it.next();
            ConfigMap cm = watched.get(p.name);
            if (cm != null && Long.parseLong(cm.getMetadata().getResourceVersion()) >= p.resourceVersion) {
              long latency = System.nanoTime() - p.sentNanos;
              if (seen++ >= warmup) {
                histogram.recordValue(latency);
              }
              it.remove();
            }
          }
          LockSupport.parkNanos(50_000);
        }
      }, "visibility-checker");
      checker.start();
      load.run(count, RATE, RATE + updates,
          name -> (resourceVersion, sentNanos) -> sent.add(new Pending(name, resourceVersion, sentNanos)));
      sending.set(false);
      checker.join(60_000);
      return histogram;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
