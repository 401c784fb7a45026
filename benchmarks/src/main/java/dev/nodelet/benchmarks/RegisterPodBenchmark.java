package dev.nodelet.benchmarks;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.objectcache.CacheSyncException;
import dev.nodelet.store.watch.WatchStoreMetrics;
import dev.nodelet.store.watch.WatchStoreStrategy;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import java.util.stream.IntStream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Measure 3: {@code registerPod} of a pod with 10 ConfigMap references on the watch strategy, sampled (p50, p99).
 * Before each call the pod is unregistered (not measured). The API server is in-process, over TLS and HTTP/2.
 *
 * <ul>
 *   <li>{@code references=shared}: another pod references the same 10 objects, so their watches run already and
 *       registering only counts references (the common case: kube-root-ca.crt and shared config).</li>
 *   <li>{@code references=new}: the pod is the only one, so each registration starts 10 watches on a node at rest.
 *       Before each call (not measured), as a kubelet mounting the previous pod's volumes would, one of its objects
 *       is read (which opens the 10 watches the registration queued), the 10 watches are awaited (open on the
 *       server, or with the server unreachable each one's first attempt failed), then the pod is unregistered and,
 *       with the server reachable, its watches are awaited closed on the server.</li>
 *   <li>{@code server=unreachable}: the API server is stopped after setup (connection refused on loopback).</li>
 * </ul>
 *
 * <p>Each trial writes {@code measure3-<references>-<server>.txt} into the directory of the system property
 * {@value #PROOF_DIR}: how many registrations ran and how many watches they were seen to start.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class RegisterPodBenchmark {

  /** The system property naming where each trial writes its count of registrations and watches started. */
  static final String PROOF_DIR = "nodelet.benchmarks.proofDir";
  static final int REFERENCES = 10;
  /** The bound of each wait for the watches of a registration; beyond it the trial fails. */
  private static final Duration WAIT = Duration.ofSeconds(30);
  /** With the server unreachable, how long the read after a registration waits for a sync that cannot come. */
  private static final Duration UNREACHABLE_SYNC_WAIT = Duration.ofMillis(1);
  /**
   * The reflectors' first retry, longer than a registration's cycle: with the server unreachable, each first attempt
   * fails once before the pod goes, so that ten failures are ten first attempts, not one watch retrying.
   */
  private static final Duration RETRY = Duration.ofSeconds(10);

  @Param({"reachable", "unreachable"})
  public String server;

  @Param({"shared", "new"})
  public String references;

  @Param({"back-to-back", "at-rest"})
  public String pace;

  private EmbeddedApiServer apiServer;
  private KubernetesClient client;
  private ReflectorEngine reflectors;
  private final WatchStoreMetrics metrics = new WatchStoreMetrics();
  private WatchStoreStrategy strategy;
  private SwitchableObjectManager<ConfigMap> manager;
  private Pod pod;
  private boolean registered;
  private boolean reachable;
  private boolean startsWatches;
  /** Open watches on the server with the measured pod unregistered: the shared pod's. */
  private int baseline;
  /** The measured calls, and the registrations of those whose 10 watches were seen to start. */
  private long registrations;
  private long confirmed;
  /** What shows a watch started: WATCH requests to the server, or failed first attempts when it is unreachable. */
  private LongSupplier started;
  private long startedBefore;
  private long startedFirst;
  /** Time spent waiting for the watches to start and to close, in nanoseconds. */
  private long startWaits;
  private long closeWaits;

  @Setup(Level.Trial)
  public void setUp() {
    apiServer = EmbeddedApiServer.builder().tls().build().start();
    client = Watched.nodeletClient(apiServer);
    Fixtures.createConfigMaps(client, 0, REFERENCES);
    reflectors = ReflectorEngine.builder(client).backoff(RETRY, RETRY).build();
    reachable = "reachable".equals(server);
    WatchStoreStrategy.Builder builder = WatchStoreStrategy.builder(client).reflectors(reflectors).metrics(metrics);
    if (!reachable) {
      builder.syncWait(UNREACHABLE_SYNC_WAIT);
    }
    strategy = builder.build();
    manager = ObjectManagers.configMaps(client).build();
    manager.useStrategy("watch", strategy);
    List<String> names = IntStream.range(0, REFERENCES).mapToObj(Fixtures::name).toList();
    if ("shared".equals(references)) {
      manager.registerPod(Fixtures.pod("holder", "uid-holder", names));
      names.forEach(n -> Fixtures.getSynced(manager, n));
    }
    startsWatches = "new".equals(references) && "at-rest".equals(pace);
    baseline = apiServer.openWatches("configmaps");
    if (reachable) {
      started = () -> apiServer.requestCount(Verb.WATCH, "configmaps");
    } else {
      apiServer.stop();
      started = this::syncFailures;
    }
    pod = Fixtures.pod("measured", "uid-measured", names);
    startedFirst = started.getAsLong();
    startedBefore = startedFirst;
  }

  @Setup(Level.Invocation)
  public void unregister() {
    if (!registered) {
      return;
    }
    if (startsWatches) {
      readOne();
      awaitStarted();
    }
    manager.unregisterPod(pod);
    registered = false;
    if (startsWatches && reachable) {
      long start = System.nanoTime();
      await(() -> apiServer.openWatches("configmaps") == baseline, "its watches to close on the server");
      closeWaits += System.nanoTime() - start;
    }
  }

  /**
   * Reads one object of the pod, as its volume's mount would: the read opens the watches the registration queued.
   * Whether it syncs in time does not matter here ({@link #awaitStarted} checks the watches): unreachable, it cannot;
   * reachable, a watch whose connection the server closed meanwhile retries after {@link #RETRY}.
   */
  private void readOne() {
    try {
      manager.get(Fixtures.NAMESPACE, Fixtures.name(0));
    } catch (CacheSyncException e) {
      // awaited below
    }
  }

  /** Waits until the last registration's 10 watches are open on the server, or each failed its first attempt. */
  private void awaitStarted() {
    long start = System.nanoTime();
    if (reachable) {
      await(() -> apiServer.openWatches("configmaps") == baseline + REFERENCES, "its 10 watches to open");
    } else {
      await(() -> started.getAsLong() - startedBefore >= REFERENCES, "its 10 watches to fail their first attempt");
    }
    startedBefore = started.getAsLong();
    confirmed++;
    startWaits += System.nanoTime() - start;
  }

  private void await(java.util.function.BooleanSupplier done, String what) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("registration " + registrations + " of pod " + pod.getMetadata().getName()
            + ": waited " + WAIT.toSeconds() + " s for " + what + " (server " + server + ", open watches "
            + (reachable ? apiServer.openWatches("configmaps") : "unknown") + ", baseline " + baseline
            + "); is the API server or the machine stalled?");
      }
      LockSupport.parkNanos(50_000);
    }
  }

  /** The watch store's failed syncs of ConfigMaps: one per failed first attempt while the server is unreachable. */
  private long syncFailures() {
    return metrics.collect().stream()
        .filter(s -> s.getMetadata().getName().equals("nodelet_store_watch_sync_failures"))
        .flatMap(s -> ((CounterSnapshot) s).getDataPoints().stream())
        .filter(p -> "configmaps".equals(p.getLabels().get("resource")))
        .mapToLong(p -> (long) p.getValue()).sum();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    try {
      if (registered && startsWatches) {
        readOne();
        awaitStarted();
      }
      writeProof();
    } finally {
      manager.close();
      strategy.close();
      reflectors.close();
      client.close();
      apiServer.close();
    }
  }

  /** What shows that the registrations did what the variant says, for the harness's report. */
  private void writeProof() {
    String what = reachable ? "WATCH requests" : "failed first attempts";
    String line = registrations + " registrations in the trial, warm-up included"
        + (startsWatches ? ", " + confirmed + " seen to start their " + REFERENCES + " watches" : "") + "; "
        + (started.getAsLong() - startedFirst) + " " + what
        + (confirmed == 0 ? "" : String.format("; mean wait for them to start %.1f ms, to close %.1f ms",
            startWaits / 1e6 / confirmed, closeWaits / 1e6 / confirmed));
    System.out.println("measure 3, references=" + references + ", pace=" + pace + ", server=" + server + ": " + line);
    String dir = System.getProperty(PROOF_DIR);
    if (dir == null) {
      return;
    }
    try {
      Files.writeString(Files.createDirectories(Path.of(dir)).resolve(proofFile(references, pace, server)), line);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the proof of measure 3 into " + dir, e);
    }
  }

  static String proofFile(String references, String pace, String server) {
    return "measure3-" + references + "-" + pace + "-" + server + ".txt";
  }

  @Benchmark
  public void registerPod() {
    manager.registerPod(pod);
    registered = true;
    registrations++;
  }
}
