package dev.nodelet.benchmarks;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import javax.management.JMException;
import javax.management.ObjectName;

/**
 * Measure 2: heap per watched object, live threads of the JVM and TCP connections to the API server, at 100 and 5,000
 * watched objects, for the watch strategy and for one fabric8 informer per object; and, as each set is referenced at
 * once, the time until every object is synced and the read requests (GET, LIST, WATCH) per object that took. The API
 * server runs in a child JVM over TLS and HTTP/2 (100 streams per connection), so this JVM holds only the client
 * side. Heap is measured after full collections, once the watches have settled.
 */
final class FootprintHarness {

  /**
   * @param connections TCP connections the client opened to the server (its count, after settling, minus before)
   * @param syncMillis from referencing every object at once to the last one synced
   * @param reads GET, LIST and WATCH requests on ConfigMaps the server received meanwhile
   */
  record Result(int objects, double heapPerObjectBytes, int threadsBefore, int threadsAfter, int connections,
      long syncMillis, long reads, String failure) {

    /** A kind that did not get its objects synced: the reason stands in for its figures. */
    static Result failed(int objects, RuntimeException e) {
      Throwable cause = e.getCause() != null ? e.getCause() : e;
      return new Result(objects, Double.NaN, 0, 0, 0, -1, 0, "did not sync: " + cause);
    }

    String or(String figure) {
      return failure != null ? failure : figure;
    }

    double readsPerObject() {
      return reads / (double) objects;
    }
  }

  static final String HISTOGRAM_PROPERTY = "nodelet.benchmarks.footprint.histogram";

  private FootprintHarness() {
  }

  static List<Row> run(boolean smoke) {
    int[] counts = smoke ? new int[] {10, 20} : new int[] {100, 5000};
    Map<Integer, Result[]> results = new LinkedHashMap<>();
    try (ApiServerProcess server = ApiServerProcess.start()) {
      try (KubernetesClient admin = Watched.client(server)) {
        int created = 0;
        for (int count : counts) {
          Fixtures.createConfigMaps(admin, created, count - created);
          created = count;
          Result nodelet = measure(server, count, Watched::nodelet, smoke);
          Main.log("footprint, watch strategy: %s", nodelet);
          Result informers;
          try {
            informers = measure(server, count, Watched::informers, smoke);
          } catch (RuntimeException e) {
            // the baseline's failure is a finding; the watch strategy's figures still count
            informers = Result.failed(count, e);
          }
          results.put(count, new Result[] {nodelet, informers});
          Main.log("footprint %d objects: watch strategy %.0f B/object, %d threads, %d connections, synced in %d ms "
              + "with %.2f reads/object; informers %.0f B/object, %d threads, %d connections, synced in %d ms with "
              + "%.2f reads/object", count, nodelet.heapPerObjectBytes, nodelet.threadsAfter, nodelet.connections,
              nodelet.syncMillis, nodelet.readsPerObject(), informers.heapPerObjectBytes, informers.threadsAfter,
              informers.connections, informers.syncMillis, informers.readsPerObject());
        }
      }
      Main.log("requests by protocol: %s", server.requestsByProtocol());
    }
    List<Row> rows = new ArrayList<>();
    Result[] small = results.get(counts[0]);
    Result[] large = results.get(counts[1]);
    for (int count : counts) {
      Result[] r = results.get(count);
      boolean judged = count == counts[1];
      rows.add(new Row(2, "heap per watched object at " + count + " objects",
          Stats.fmt(r[0].heapPerObjectBytes / 1024) + " KiB",
          r[1].or(Stats.fmt(r[1].heapPerObjectBytes / 1024) + " KiB (one informer per object)"),
          judged ? "≤ 4 KiB" : "—", judged ? Row.verdict(r[0].heapPerObjectBytes <= 4096) : "—"));
    }
    for (int count : counts) {
      Result[] r = results.get(count);
      rows.add(new Row(2, "live JVM threads at " + count + " watched objects (before watching)",
          r[0].threadsAfter + " (" + r[0].threadsBefore + ")",
          r[1].or(r[1].threadsAfter + " (" + r[1].threadsBefore + ")"),
          "≤ 40, no more at " + counts[1] + " than at " + counts[0] + " (+ 2)",
          Row.verdict(r[0].threadsAfter <= 40 && large[0].threadsAfter <= small[0].threadsAfter + 2)));
    }
    int limit = (counts[1] + 99) / 100 + 2;
    rows.add(new Row(2, "TCP connections to the API server at " + counts[1] + " watches (at " + counts[0] + ")",
        large[0].connections + " (" + small[0].connections + ")",
        large[1].or(large[1].connections + " (" + small[1].connections + ")"),
        "≤ ceil(" + counts[1] + " / 100) + 2 = " + limit,
        Row.verdict(large[0].connections <= limit)));
    rows.add(new Row(2, counts[1] + " objects referenced at once → all synced; read requests (GET, LIST, WATCH) "
        + "per object", large[0].syncMillis + " ms; " + Stats.fmt(large[0].readsPerObject()) + " requests/object",
        large[1].or(large[1].syncMillis + " ms; " + Stats.fmt(large[1].readsPerObject()) + " requests/object (one "
        + "informer per object, all started at once)"), "≤ 10 s; ≤ 1 request/object with WatchList",
        Row.verdict(large[0].syncMillis <= 10_000 && large[0].readsPerObject() <= 1)));
    return rows;
  }

  static Result measure(ApiServerProcess server, int count, Function<ApiServerProcess, Watched> kind,
      boolean smoke) {
    usedHeap(smoke); // lets the connections of clients closed before go
    int connectionsBefore = server.stats().connections();
    try (Watched watched = kind.apply(server)) {
      watched.client.configMaps().inNamespace(Fixtures.NAMESPACE).withName(Fixtures.name(0)).get(); // the client's own threads and classes
      long before = usedHeap(smoke);
      int threadsBefore = liveThreads();
      ApiServerProcess.Stats requestsBefore = server.stats();
      long start = System.nanoTime();
      watched.watch(count);
      long syncMillis = (System.nanoTime() - start) / 1_000_000;
      long reads = server.stats().reads() - requestsBefore.reads();
      long after = settledHeap(smoke);
      int threadsAfter = liveThreads();
      int connections = server.stats().connections() - connectionsBefore;
      histogram(count, watched.getClass().getEnclosingMethod().getName());
      Main.log("threads with %d objects watched (%s): %s", count, watched.getClass().getEnclosingMethod().getName(),
          threadNames());
      return new Result(count, (after - before) / (double) count, threadsBefore, threadsAfter, connections,
          syncMillis, reads, null);
    }
  }

  /**
   * With {@code -Dnodelet.benchmarks.footprint.histogram=dir}, writes the class histogram of the live heap (what
   * {@code jcmd GC.class_histogram} prints) to {@code dir/histogram-<kind>-<count>.txt}: where the bytes per object go.
   */
  private static void histogram(int count, String kind) {
    String dir = System.getProperty(HISTOGRAM_PROPERTY);
    if (dir == null) {
      return;
    }
    try {
      Object text = ManagementFactory.getPlatformMBeanServer().invoke(
          new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
          new Object[] {new String[0]}, new String[] {String[].class.getName()});
      Path file = Path.of(dir, "histogram-" + kind + "-" + count + ".txt");
      Files.createDirectories(file.getParent());
      Files.writeString(file, text.toString());
      Main.log("class histogram written to %s", file);
    } catch (JMException | IOException e) {
      Main.log("no class histogram: %s", e);
    }
  }

  /** The used heap once it no longer changes by more than 1% a second (the watches are open). */
  private static long settledHeap(boolean smoke) {
    long previous = usedHeap(smoke);
    for (int i = 0; i < (smoke ? 1 : 10); i++) {
      sleep(smoke ? 200 : 1000);
      long now = usedHeap(smoke);
      if (Math.abs(now - previous) < previous / 100) {
        return now;
      }
      previous = now;
    }
    return previous;
  }

  /**
   * The used heap after three full GCs; after one in smoke mode, whose figures are not judged (a GC of the test
   * JVM's heap takes a while, and a smoke run makes a hundred).
   */
  static long usedHeap(boolean smoke) {
    for (int i = 0; i < (smoke ? 1 : 3); i++) {
      System.gc();
      sleep(50);
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** Live threads by name, digits folded, most frequent first. */
  static String threadNames() {
    Map<String, Long> byName = Thread.getAllStackTraces().keySet().stream()
        .collect(Collectors.groupingBy(t -> t.getName().replaceAll("[0-9]+", "#"), Collectors.counting()));
    return byName.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .map(e -> e.getKey() + " ×" + e.getValue()).collect(Collectors.joining(", "));
  }

  static int liveThreads() {
    return ManagementFactory.getThreadMXBean().getThreadCount();
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
