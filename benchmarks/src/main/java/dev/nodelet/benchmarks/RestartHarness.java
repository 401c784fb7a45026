package dev.nodelet.benchmarks;

import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Function;
import java.util.stream.IntStream;

/**
 * Measure 11: the API server restarted under 5,000 watched objects. The server (child JVM, TLS + HTTP/2) is stopped
 * for {@link #OUTAGE_MILLIS}, every watch ending with its connection, and started again with its objects and
 * resourceVersions. Right after the start, one object in {@link #SAMPLE_EVERY} is updated through another client.
 * Measured: the time from the start until every watch is open again (a resumed watch misses nothing, so every get is
 * fresh from then on) and until a get returns the last of the sampled updates; the LIST requests from the stop until
 * the watches are open again (a watch that can resume from its resourceVersion needs none); and the WATCH requests
 * arriving at the server in each 100 ms window, against the token bucket that paces re-establishments. Watch strategy
 * next to one informer per object.
 */
final class RestartHarness {

  static final long OUTAGE_MILLIS = 2000;
  /** The restart bucket of {@code ReflectorEngine}'s defaults, which the watch strategy's reflectors go through. */
  static final double BUCKET_RATE = 400;
  static final int BUCKET_BURST = 100;
  private static final long GIVE_UP_MILLIS = 60_000;
  /** One object in this many is updated right after the restart. */
  static final int SAMPLE_EVERY = 10;

  /**
   * @param freshMillis from the start until the last sampled object's post-restart update was visible to get; -1 if
   *     not within {@link #GIVE_UP_MILLIS}
   * @param lists LIST requests from the stop until the watches were open again
   * @param watchesPerWindow WATCH requests per 100 ms window over the same span
   * @param reopenMillis from the start until as many watches were open as before the stop; -1 if never
   * @param sampled how many objects were updated after the restart
   */
  record Result(long freshMillis, long lists, long[] watchesPerWindow, long reopenMillis, int sampled) {

    /** From the start until every get is fresh: every watch open again and every sampled update seen; -1 if not. */
    long allFreshMillis() {
      return freshMillis < 0 || reopenMillis < 0 ? -1 : Math.max(freshMillis, reopenMillis);
    }

    String figure() {
      return allFreshMillis() < 0 ? "> " + GIVE_UP_MILLIS / 1000 + " s (watches open again after "
          + (reopenMillis < 0 ? "—" : reopenMillis + " ms") + ", sampled updates "
          + (freshMillis < 0 ? "not all seen" : "seen after " + freshMillis + " ms") + ")"
          : allFreshMillis() + " ms (all watches open again after " + reopenMillis + " ms; the last of " + sampled
          + " updates made after the restart seen by get after " + freshMillis + " ms)";
    }

    long maxWatchesPerWindow() {
      return Arrays.stream(watchesPerWindow).max().orElse(0);
    }

    long watches() {
      return Arrays.stream(watchesPerWindow).sum();
    }

    String describe() {
      return figure() + "; " + lists + " LIST, " + watches() + " WATCH requests, at most " + maxWatchesPerWindow()
          + " per 100 ms";
    }
  }

  /** This measure's number in docs/benchmarks.md. */
  static final int MEASURE = 11;

  private RestartHarness() {
  }

  static List<Row> run(boolean smoke) {
    int count = smoke ? 20 : 5000;
    Result nodelet;
    Result informers;
    String baselineFailure = "—";
    try (ApiServerProcess server = ApiServerProcess.start();
        KubernetesClient admin = Watched.client(server)) {
      Fixtures.createConfigMaps(admin, 0, count);
      nodelet = measure(server, admin, count, smoke, Watched::nodelet);
      Main.log("restart: watch strategy %s", nodelet.describe());
      // the smoke run only proves the harness works: the baseline would double its time
      Result baseline = null;
      if (!smoke) {
        try {
          baseline = measure(server, admin, count, smoke, Watched::informers);
        } catch (RuntimeException e) {
          // the baseline's failure is a finding; the watch strategy's figures still count
          Main.log("restart: the informer baseline failed: %s", e);
          baselineFailure = "did not sync: " + (e.getCause() != null ? e.getCause() : e);
        }
      }
      informers = baseline;
    }
    Main.log("restart: watch strategy %s; informers %s", nodelet.describe(),
        informers == null ? "not run (smoke)" : informers.describe());
    Main.log("restart: WATCH requests per 100 ms, watch strategy %s", Arrays.toString(nodelet.watchesPerWindow()));
    Main.log("restart: bucket check over every span of windows, watch strategy: %s",
        tightestSpan(nodelet.watchesPerWindow()));
    boolean paced = Watched.storeOnReflectors();
    String bucket = "never above the bucket (" + Stats.fmt(BUCKET_RATE) + "/s, burst " + BUCKET_BURST
        + "): in any k windows ≤ burst + rate × (k + 1) × 100 ms + 1";
    return List.of(
        new Row(MEASURE, "API server restarted with " + count + " watched objects → every get fresh again (every "
            + "watch open again, and updates made after the restart to 1 object in " + SAMPLE_EVERY + " visible)",
            nodelet.figure(), informers == null ? baselineFailure : informers.figure() + " (one informer per object)",
            "≤ 15 s", Row.verdict(nodelet.allFreshMillis() >= 0 && nodelet.allFreshMillis() <= 15_000)),
        new Row(MEASURE, "LIST requests after the restart (" + count + " watches that can resume)",
            Long.toString(nodelet.lists),
            informers == null ? baselineFailure : informers.lists + " (one informer per object)",
            "0",
            Row.verdict(nodelet.lists == 0)),
        new Row(MEASURE, "WATCH requests arriving at the server per 100 ms after the restart, max (in all)",
            nodelet.maxWatchesPerWindow() + " (" + nodelet.watches() + ")", informers == null ? baselineFailure
            : informers.maxWatchesPerWindow() + " (" + informers.watches() + ") (one informer per object)", bucket,
            paced ? Row.verdict(withinBucket(nodelet.watchesPerWindow())) : "— (no bucket in this store)"));
  }

  /**
   * Whether the WATCH arrivals conform to the bucket: every span of k sampling windows holds at most
   * {@code burst + rate * (k + 1) * window + 1} of them (one window more than the span, as the samples are taken on
   * another clock than the reservations).
   */
  static boolean withinBucket(long[] perWindow) {
    for (int from = 0; from < perWindow.length; from++) {
      long sum = 0;
      for (int to = from; to < perWindow.length; to++) {
        sum += perWindow[to];
        if (sum > bound(to - from + 1)) {
          return false;
        }
      }
    }
    return true;
  }

  /** The most WATCH requests {@code k} consecutive windows may hold under the bucket. */
  private static double bound(int k) {
    return BUCKET_BURST + BUCKET_RATE * (k + 1) * (ApiServerProcess.SAMPLE_MILLIS / 1000.0) + 1;
  }

  /** The span of windows that comes closest to (or goes furthest over) its bound, for the log. */
  static String tightestSpan(long[] perWindow) {
    String tightest = "no WATCH requests";
    String verdict = withinBucket(perWindow) ? "within" : "OVER";
    double least = Double.MAX_VALUE;
    for (int from = 0; from < perWindow.length; from++) {
      long sum = 0;
      for (int to = from; to < perWindow.length; to++) {
        sum += perWindow[to];
        int k = to - from + 1;
        if (bound(k) - sum < least) {
          least = bound(k) - sum;
          tightest = verdict + " the bound in every span of the "
              + perWindow.length + " windows; tightest: windows " + from + "–" + to + " (k = " + k + ") hold " + sum
              + " against " + Stats.fmt(bound(k));
        }
      }
    }
    return tightest;
  }

  static Result measure(ApiServerProcess server, KubernetesClient admin, int count, boolean smoke,
      Function<ApiServerProcess, Watched> kind) {
    try (Watched watched = kind.apply(server).watch(count)) {
      int openBefore = waitForWatches(server, count, 30_000);
      ApiServerProcess.Stats before = server.stats();
      server.startSampling();
      server.stopServer();
      FootprintHarness.sleep(smoke ? 200 : OUTAGE_MILLIS);
      server.startServer();
      long start = System.nanoTime();
      // timed beside the updates and the gets, which take seconds of their own on a loaded machine
      CompletableFuture<Long> reopened = CompletableFuture.supplyAsync(() -> {
        while (millisSince(start) < GIVE_UP_MILLIS) {
          if (server.stats().watches() >= openBefore) {
            return millisSince(start);
          }
          FootprintHarness.sleep(20);
        }
        return -1L;
      });
      AtomicLongArray updated = updateSample(admin, count);
      long freshMillis = waitFresh(watched, updated, start);
      long reopenMillis = reopened.join();
      FootprintHarness.sleep(2 * ApiServerProcess.SAMPLE_MILLIS);
      ApiServerProcess.Samples samples = server.stopSampling();
      long lists = server.stats().requests(Verb.LIST) - before.requests(Verb.LIST);
      return new Result(freshMillis, lists, samples.watchRequests(), reopenMillis, updated.length());
    }
  }

  /** Waits until {@code count} watches are open on the server, or the timeout; returns how many are. */
  private static int waitForWatches(ApiServerProcess server, int count, long timeoutMillis) {
    long start = System.nanoTime();
    int open;
    while ((open = server.stats().watches()) < count && millisSince(start) < timeoutMillis) {
      FootprintHarness.sleep(50);
    }
    return open;
  }

  /**
   * Updates one object in {@link #SAMPLE_EVERY} once, with eight writers; returns the resourceVersion of each update,
   * the j-th for object {@code j * SAMPLE_EVERY}.
   */
  private static AtomicLongArray updateSample(KubernetesClient admin, int count) {
    AtomicLongArray versions = new AtomicLongArray((count + SAMPLE_EVERY - 1) / SAMPLE_EVERY);
    ExecutorService writers = Executors.newFixedThreadPool(8);
    try {
      CompletableFuture.allOf(IntStream.range(0, versions.length()).mapToObj(j -> CompletableFuture.runAsync(
          () -> versions.set(j, update(admin, Fixtures.name(j * SAMPLE_EVERY))), writers))
          .toArray(CompletableFuture[]::new)).join();
    } finally {
      writers.shutdownNow();
    }
    return versions;
  }

  private static long update(KubernetesClient admin, String name) {
    for (int attempt = 1; ; attempt++) {
      try {
        ConfigMap current = admin.configMaps().inNamespace(Fixtures.NAMESPACE).withName(name).get();
        ConfigMap next = new ConfigMapBuilder(current).addToData("key", "after-restart").build();
        return Long.parseLong(admin.configMaps().resource(next).update().getMetadata().getResourceVersion());
      } catch (KubernetesClientException e) {
        // the writer's own connection may still be the one the restart cut
        if (attempt == 5) {
          throw e;
        }
        FootprintHarness.sleep(50);
      }
    }
  }

  /**
   * Re-reads the sampled objects not yet fresh until all are; returns the milliseconds from {@code start}, or -1.
   */
  private static long waitFresh(Watched watched, AtomicLongArray versions, long start) {
    List<Integer> pending = new ArrayList<>(IntStream.range(0, versions.length()).boxed().toList());
    while (!pending.isEmpty()) {
      pending.removeIf(i -> {
        ConfigMap cm = getQuietly(watched, Fixtures.name(i * SAMPLE_EVERY));
        return cm != null && Long.parseLong(cm.getMetadata().getResourceVersion()) >= versions.get(i);
      });
      if (!pending.isEmpty() && millisSince(start) > GIVE_UP_MILLIS) {
        Main.log("restart: %d objects still stale after %d s", pending.size(), GIVE_UP_MILLIS / 1000);
        return -1;
      }
      FootprintHarness.sleep(1);
    }
    return millisSince(start);
  }

  private static ConfigMap getQuietly(Watched watched, String name) {
    try {
      return watched.get(name);
    } catch (RuntimeException e) {
      return null; // not synced again yet
    }
  }

  private static long millisSince(long startNanos) {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }
}
