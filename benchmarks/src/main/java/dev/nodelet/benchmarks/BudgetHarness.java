package dev.nodelet.benchmarks;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.store.watch.WatchStoreStrategy;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import org.HdrHistogram.Histogram;

/**
 * Measure 12: the watch budget. 5,000 referenced ConfigMaps on a watch strategy with {@code maxWatches(500)} and a
 * polled time-to-live of {@link #TTL}; updates at {@link #RATE}/s to random objects through another client; the open
 * watches on the server sampled every 100 ms; and the latency from each update to the first get that returns it, apart
 * for objects that held a watch from the update to that get ({@link ObjectState#RUNNING} when the update was sent and
 * when the get returned it) and for the others, served by the TTL rules (polled when updated, or demoted before the
 * get). Two checkers, one for objects watched when updated and one for the others, re-read their pending objects every
 * millisecond. The updates' own round trips are reported beside: a get cannot see an update sooner. The API server
 * runs in a child JVM (TLS + HTTP/2).
 */
final class BudgetHarness {

  static final int RATE = 100;
  static final Duration TTL = Duration.ofSeconds(1);

  private record Pending(String name, long resourceVersion, long sentNanos) {
  }

  /** This measure's number in docs/benchmarks.md. */
  static final int MEASURE = 12;

  private BudgetHarness() {
  }

  static List<Row> run(boolean smoke) {
    int count = smoke ? 40 : 5000;
    int budget = smoke ? 10 : 500;
    String what = "max.watches=" + budget + ", " + count + " referenced objects, " + RATE + " updates/s";
    int seconds = smoke ? 1 : 15;
    try (ApiServerProcess server = ApiServerProcess.start();
        KubernetesClient admin = Watched.client(server);
        KubernetesClient client = Watched.nodeletClient(server)) {
      Fixtures.createConfigMaps(admin, 0, count);
      try (WatchStoreStrategy strategy = WatchStoreStrategy.builder(client).maxWatches(budget).polledTtl(TTL)
          .build()) {
        AtomicReference<ObjectStore<?>> store = new AtomicReference<>();
        StoreStrategy capturing = new StoreStrategy() {
          @Override
          public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type,
              ObjectStore.Listener<? super T> listener) {
            ObjectStore<T> created = strategy.createStore(type, listener);
            store.set(created);
            return created;
          }
        };
        SwitchableObjectManager<ConfigMap> manager = ObjectManagers.configMaps(client).build();
        try {
          manager.useStrategy("watch", capturing);
          server.startSampling();
          Fixtures.podsReferencing(0, count).forEach(manager::registerPod);
          for (int i = 0; i < count; i++) {
            Fixtures.getSynced(manager, Fixtures.name(i));
          }
          Histogram[] latencies = measure(admin, manager, store.get(), count, seconds);
          ApiServerProcess.Samples samples = server.stopSampling();
          Histogram watched = latencies[0];
          Histogram polled = latencies[1];
          Histogram demoted = latencies[2];
          Histogram roundTrips = latencies[3];
          polled.add(demoted);
          String roundTrip = "; the updates' own round trip (PUT sent → answered): p50 "
              + Stats.fmt(Stats.ms(roundTrips.getValueAtPercentile(50))) + " ms, p99 "
              + Stats.fmt(Stats.ms(roundTrips.getValueAtPercentile(99))) + " ms";
          Main.log("budget: at most %d watches open; watched %s; polled %s (%d demoted before their get)%s",
              samples.maxWatches(), describe(watched), describe(polled), demoted.getTotalCount(), roundTrip);
          double ttlMs = TTL.toMillis();
          return List.of(
              new Row(MEASURE, "open watches on the server, " + what + " (sampled every 100 ms, from the first "
                  + "reference on)", "max " + samples.maxWatches(), "—", "≤ " + budget,
                  Row.verdict(samples.maxWatches() <= budget)),
              new Row(MEASURE, "update → get, objects holding a watch from the update to the get (" + what + ", "
                  + seconds + " s)", describe(watched) + roundTrip, "—", "p99 ≤ 50 ms",
                  Row.verdict(watched.getTotalCount() > 0 && Stats.ms(watched.getValueAtPercentile(99)) <= 50)),
              new Row(MEASURE, "update → get, polled objects (TTL " + TTL.toMillis() + " ms; " + what + ", " + seconds
                  + " s)", describe(polled) + ", of which " + demoted.getTotalCount() + " held a watch when updated "
                  + "and were polled by their get", "—", "p99 ≤ TTL (" + TTL.toMillis() + " ms)",
                  Row.verdict(polled.getTotalCount() > 0 && Stats.ms(polled.getValueAtPercentile(99)) <= ttlMs)));
        } finally {
          manager.close();
        }
      }
    }
  }

  private static String describe(Histogram h) {
    return h.getTotalCount() == 0 ? "no updates" : "p50 " + Stats.fmt(Stats.ms(h.getValueAtPercentile(50)))
        + " ms, p99 " + Stats.fmt(Stats.ms(h.getValueAtPercentile(99))) + " ms, max "
        + Stats.fmt(Stats.ms(h.getMaxValue())) + " ms (" + h.getTotalCount() + " updates)";
  }

  private static ConfigMap getQuietly(SwitchableObjectManager<ConfigMap> manager, String name) {
    try {
      return manager.get(Fixtures.NAMESPACE, name);
    } catch (RuntimeException e) {
      return null; // a polled object's GET failed: the next check tries again
    }
  }

  /**
   * Returns the latencies of {watched, polled, demoted, round trips}: updates to objects that held a watch from the
   * update to the get, to polled ones, to watched ones demoted to polled before the get saw the update (the TTL
   * rules served them), and the updates' own round trips.
   */
  private static Histogram[] measure(KubernetesClient admin, SwitchableObjectManager<ConfigMap> manager,
      ObjectStore<?> store, int count, int seconds) {
    UpdateLoad load = new UpdateLoad(admin);
    Histogram watched = new Histogram(120_000_000_000L, 3);
    Histogram polled = new Histogram(120_000_000_000L, 3);
    Histogram demoted = new Histogram(120_000_000_000L, 3);
    Histogram roundTrips = new Histogram(120_000_000_000L, 3);
    AtomicBoolean sending = new AtomicBoolean(true);
    long giveUp = TTL.toNanos() * 10;
    // one checker per kind: a polled get that fetches waits for the server, and must not delay the watched checks
    ConcurrentLinkedQueue<Pending> sentWatched = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<Pending> sentPolled = new ConcurrentLinkedQueue<>();
    Thread watchedChecker = checker("budget-checker-watched", manager, sentWatched, watched, sending, giveUp,
        name -> store.state(Fixtures.NAMESPACE, name).orElse(null) == ObjectState.RUNNING ? watched : demoted);
    Thread polledChecker = checker("budget-checker-polled", manager, sentPolled, polled, sending, giveUp,
        name -> polled);
    load.run(count, RATE, RATE * seconds, name -> {
      ConcurrentLinkedQueue<Pending> sent =
          store.state(Fixtures.NAMESPACE, name).orElse(null) == ObjectState.RUNNING ? sentWatched : sentPolled;
      return (resourceVersion, sentNanos) -> {
        roundTrips.recordValue(System.nanoTime() - sentNanos);
        sent.add(new Pending(name, resourceVersion, sentNanos));
      };
    });
    sending.set(false);
    try {
      watchedChecker.join(giveUp / 1_000_000 + 10_000);
      polledChecker.join(giveUp / 1_000_000 + 10_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    return new Histogram[] {watched, polled, demoted, roundTrips};
  }

  /**
   * Re-reads the pending updates of one kind every millisecond and records when a get first returns each, in the
   * histogram {@code kind} gives for the object then (a get of an object demoted meanwhile followed the TTL rules).
   */
  private static Thread checker(String name, SwitchableObjectManager<ConfigMap> manager,
      ConcurrentLinkedQueue<Pending> sent, Histogram latencies, AtomicBoolean sending, long giveUp,
      Function<String, Histogram> kind) {
    Thread checker = new Thread(() -> {
      List<Pending> pending = new ArrayList<>();
      while (sending.get() || !pending.isEmpty() || !sent.isEmpty()) {
        for (Pending p; (p = sent.poll()) != null; ) {
          pending.add(p);
        }
        long now = System.nanoTime();
        for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
          Pending p = it.next();
          ConfigMap cm = getQuietly(manager, p.name);
          long latency = System.nanoTime() - p.sentNanos;
          if (cm != null && Long.parseLong(cm.getMetadata().getResourceVersion()) >= p.resourceVersion) {
            kind.apply(p.name).recordValue(latency);
            it.remove();
          } else if (now - p.sentNanos > giveUp) {
            latencies.recordValue(Math.min(latency, latencies.getHighestTrackableValue()));
            it.remove();
          }
        }
        LockSupport.parkNanos(1_000_000);
      }
    }, name);
    checker.start();
    return checker;
  }
}
