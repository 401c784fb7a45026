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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Function;
import java.util.stream.IntStream;

/**
 * Measure 11: the API server restarted under 5,000 watched objects. The server (child JVM, TLS + HTTP/2) is stopped
 * for {@link #OUTAGE_MILLIS}, every watch ending with its connection, and started again with its objects and
 * resourceVersions. Right after the start, one object in {@link #SAMPLE_EVERY} is updated through another client.
 * Measured: the time from the start until every watch is open again (a resumed watch misses nothing, so every get is
 * fresh from then on) and until a get returns the last of the sampled updates; the LIST requests from the stop until
 * the watches are open again (a watch that can resume from its resourceVersion needs none); and the re-established
 * watches against the token bucket that paces them, twice: as the client counts its requests' starts (read every
 * 10 ms, judged on real time) and as WATCH requests arriving at the server in 100 ms windows, which add the server's
 * own queueing (judged with one window's slack). Watch strategy next to one informer per object.
 */
final class RestartHarness {

  static final long OUTAGE_MILLIS = 2000;
  /** The restart bucket of {@code ReflectorEngine}'s defaults, which the watch strategy's reflectors go through. */
  static final double BUCKET_RATE = 400;
  static final int BUCKET_BURST = 100;
  private static final long GIVE_UP_MILLIS = 60_000;
  /** How often the client's count of restarted watches is read. */
  private static final long COUNT_EVERY_MILLIS = 10;
  private static final long WINDOW_NANOS = ApiServerProcess.SAMPLE_MILLIS * 1_000_000L;
  /** One object in this many is updated right after the restart. */
  static final int SAMPLE_EVERY = 10;

  /**
   * @param freshMillis from the start until the last sampled object's post-restart update was visible to get; -1 if
   *     not within {@link #GIVE_UP_MILLIS}
   * @param lists LIST requests from the stop until the watches were open again
   * @param watchesPerWindow WATCH requests per 100 ms window over the same span
   * @param reopenMillis from the start until as many watches were open as before the stop; -1 if never
   * @param sampled how many objects were updated after the restart
   * @param updatedMillis from the start until the last of those updates was answered
   * @param starts the client's own count of restarted watches over the same span; null if it keeps none
   */
  record Result(long freshMillis, long lists, long[] watchesPerWindow, long reopenMillis, int sampled,
      long updatedMillis, StartCounts starts) {

    /** From the start until every get is fresh: every watch open again and every sampled update seen; -1 if not. */
    long allFreshMillis() {
      return freshMillis < 0 || reopenMillis < 0 ? -1 : Math.max(freshMillis, reopenMillis);
    }

    String figure() {
      return allFreshMillis() < 0 ? "> " + GIVE_UP_MILLIS / 1000 + " s (watches open again after "
          + (reopenMillis < 0 ? "—" : reopenMillis + " ms") + ", sampled updates "
          + (freshMillis < 0 ? "not all seen" : "seen after " + freshMillis + " ms") + ")"
          : allFreshMillis() + " ms (all watches open again after " + reopenMillis + " ms; the last of " + sampled
          + " updates made after the restart answered after " + updatedMillis + " ms, seen by get after "
          + freshMillis + " ms)";
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
    Main.log("restart: arrivals at the server against the bucket, watch strategy: %s",
        tightestSpan(nodelet.watchesPerWindow()));
    StartCounts starts = nodelet.starts();
    Main.log("restart: restarts started by the client per 100 ms, watch strategy %s",
        Arrays.toString(starts.perWindow()));
    Main.log("restart: restarts started by the client against the bucket, watch strategy: %s", starts.tightest());
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
        new Row(MEASURE, "watches re-established, counted by the client as each request starts: most in 100 ms (in "
            + "all); tightest span against the bucket", starts.max() + " (" + starts.total() + "); "
            + starts.tightest(), "— (not counted)", "never above the bucket (" + Stats.fmt(BUCKET_RATE)
            + "/s, burst " + BUCKET_BURST + "): in any span of t seconds ≤ burst + 1 + rate × t",
            Row.verdict(starts.withinBucket())),
        new Row(MEASURE, "WATCH requests arriving at the server per 100 ms after the restart, max (in all); tightest "
            + "span", nodelet.maxWatchesPerWindow() + " (" + nodelet.watches() + "); "
            + tightestSpan(nodelet.watchesPerWindow()), informers == null ? baselineFailure
            : informers.maxWatchesPerWindow() + " (" + informers.watches() + ") (one informer per object)",
            "never above the bucket, seen from the server: in any k windows ≤ burst + rate × (k + 1) × 100 ms + 1",
            Row.verdict(withinBucket(nodelet.watchesPerWindow()))));
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
    String verdict = withinBucket(perWindow) ? "within the bound in every span" : "OVER the bound in a span";
    double least = Double.MAX_VALUE;
    for (int from = 0; from < perWindow.length; from++) {
      long sum = 0;
      for (int to = from; to < perWindow.length; to++) {
        sum += perWindow[to];
        int k = to - from + 1;
        if (bound(k) - sum < least) {
          least = bound(k) - sum;
          tightest = verdict + " of the " + perWindow.length + " windows; tightest: windows " + from + "–" + to
              + " (k = " + k + ") hold " + sum + " against " + Stats.fmt(bound(k));
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
      StartCounter counter = new StartCounter(watched);
      server.startSampling();
      server.stopServer();
      FootprintHarness.sleep(smoke ? 200 : OUTAGE_MILLIS);
      server.startServer();
      long start = System.nanoTime();
      // timed beside the updates and the gets, which take seconds of their own on a loaded machine; asked once per
      // sampling window: counting 5,000 watches takes the server CPU time the restart needs
      CompletableFuture<Long> reopened = CompletableFuture.supplyAsync(() -> {
        while (millisSince(start) < GIVE_UP_MILLIS) {
          if (server.stats().watches() >= openBefore) {
            return millisSince(start);
          }
          FootprintHarness.sleep(ApiServerProcess.SAMPLE_MILLIS);
        }
        return -1L;
      });
      AtomicLongArray updated = updateSample(admin, count, start);
      long updatedMillis = millisSince(start);
      long freshMillis = waitFresh(watched, updated, start);
      long reopenMillis = reopened.join();
      FootprintHarness.sleep(2 * ApiServerProcess.SAMPLE_MILLIS);
      ApiServerProcess.Samples samples = server.stopSampling();
      StartCounts starts = counter.stop();
      long lists = server.stats().requests(Verb.LIST) - before.requests(Verb.LIST);
      return new Result(freshMillis, lists, samples.watchRequests(), reopenMillis, updated.length(), updatedMillis,
          starts);
    }
  }

  /**
   * Reads the client's count of restarted watches every {@link #COUNT_EVERY_MILLIS} ms, on a thread of its own, with
   * the time before and after each read: the starts between two reads happened within that span, so the bucket is
   * checked on real time, with no window's slack.
   */
  private static final class StartCounter {
    private final Watched watched;
    private final List<long[]> reads = new ArrayList<>(); // guarded by itself: {before, count, after}
    private final Thread thread;
    private volatile boolean stopped;

    StartCounter(Watched watched) {
      this.watched = watched;
      this.thread = new Thread(this::run, "restart-start-counter");
      this.thread.setDaemon(true);
      this.thread.start();
    }

    private void run() {
      while (!stopped) {
        long before = System.nanoTime();
        long count = watched.restarts();
        long after = System.nanoTime();
        synchronized (reads) {
          reads.add(new long[] {before, count, after});
        }
        FootprintHarness.sleep(COUNT_EVERY_MILLIS);
      }
    }

    /** Stops reading; null if the client keeps no count. */
    StartCounts stop() {
      stopped = true;
      try {
        thread.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      synchronized (reads) {
        return reads.isEmpty() || reads.get(0)[1] < 0 ? null : new StartCounts(reads.toArray(long[][]::new));
      }
    }
  }

  /** The client's reads of its count of restarted watches: {before, count, after} each, in order. */
  record StartCounts(long[][] reads) {

    long total() {
      return reads[reads.length - 1][1] - reads[0][1];
    }

    /** Starts per 100 ms window from the first read, each read's starts put in the window its read ends in. */
    long[] perWindow() {
      long origin = reads[0][2];
      long[] windows = new long[(int) ((reads[reads.length - 1][2] - origin) / WINDOW_NANOS) + 1];
      for (int i = 1; i < reads.length; i++) {
        windows[(int) ((reads[i][2] - origin) / WINDOW_NANOS)] += reads[i][1] - reads[i - 1][1];
      }
      return windows;
    }

    long max() {
      return Arrays.stream(perWindow()).max().orElse(0);
    }

    /** The most starts the bucket allows in a span of {@code nanos}: burst + 1 + rate × t. */
    private static double bound(long nanos) {
      return BUCKET_BURST + 1 + BUCKET_RATE * nanos / 1e9;
    }

    /** Whether every pair of reads conforms: the starts between them within the bound of the longest span. */
    boolean withinBucket() {
      return slack()[0] >= 0;
    }

    /** The least room left under the bound over all pairs of reads, with the pair's starts and span. */
    private double[] slack() {
      double[] least = {Double.MAX_VALUE, 0, 0};
      for (int i = 0; i < reads.length; i++) {
        for (int j = i + 1; j < reads.length; j++) {
          long starts = reads[j][1] - reads[i][1];
          long span = reads[j][2] - reads[i][0];
          double room = bound(span) - starts;
          if (room < least[0]) {
            least = new double[] {room, starts, span};
          }
        }
      }
      return least;
    }

    String tightest() {
      double[] least = slack();
      if (least[0] == Double.MAX_VALUE) {
        return "no restarts";
      }
      return (least[0] >= 0 ? "within" : "OVER") + ": " + (long) least[1] + " in " + Stats.fmt(least[2] / 1e6)
          + " ms against " + Stats.fmt(bound((long) least[2]));
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
  private static AtomicLongArray updateSample(KubernetesClient admin, int count, long start) {
    AtomicLongArray versions = new AtomicLongArray((count + SAMPLE_EVERY - 1) / SAMPLE_EVERY);
    long[] answeredMillis = new long[versions.length()];
    AtomicInteger failures = new AtomicInteger();
    ExecutorService writers = Executors.newFixedThreadPool(8);
    try {
      CompletableFuture.allOf(IntStream.range(0, versions.length()).mapToObj(j -> CompletableFuture.runAsync(() -> {
        versions.set(j, update(admin, Fixtures.name(j * SAMPLE_EVERY), failures));
        answeredMillis[j] = millisSince(start);
      }, writers)).toArray(CompletableFuture[]::new)).join();
    } finally {
      writers.shutdownNow();
    }
    Arrays.sort(answeredMillis);
    Main.log("restart: the %d updates answered after (ms from the start) p10 %d, p50 %d, p90 %d, last %d; %d "
        + "attempts failed and were made again", answeredMillis.length, answeredMillis[answeredMillis.length / 10],
        answeredMillis[answeredMillis.length / 2], answeredMillis[answeredMillis.length * 9 / 10],
        answeredMillis[answeredMillis.length - 1], failures.get());
    return versions;
  }

  private static long update(KubernetesClient admin, String name, AtomicInteger failures) {
    for (int attempt = 1; ; attempt++) {
      try {
        ConfigMap current = admin.configMaps().inNamespace(Fixtures.NAMESPACE).withName(name).get();
        ConfigMap next = new ConfigMapBuilder(current).addToData("key", "after-restart").build();
        return Long.parseLong(admin.configMaps().resource(next).update().getMetadata().getResourceVersion());
      } catch (KubernetesClientException e) {
        // the writer's own connection may still be the one the restart cut
        failures.incrementAndGet();
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
