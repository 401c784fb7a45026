package dev.nodelet.store.watch.internal;

import static dev.nodelet.objectcache.testing.FaultHarness.NS;
import static dev.nodelet.objectcache.testing.FaultHarness.name;
import static dev.nodelet.objectcache.testing.FaultHarness.pod;
import static dev.nodelet.objectcache.testing.FaultHarness.version;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.kube.KubeClients;
import dev.nodelet.objectcache.CacheSyncException;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.testing.FaultHarness;
import dev.nodelet.store.watch.WatchStoreMetrics;
import dev.nodelet.store.watch.WatchStoreStrategy;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * API server faults against the watch strategy with the client the {@code nodelet-kube} service builds and
 * {@value #OBJECTS} watched objects: more than the 100 concurrent streams an API server allows on one HTTP/2
 * connection (kubernetes#121120), so all of them reconnecting at once is covered. While a fault is injected and
 * after, a reader thread gets every object in a loop and checks that no get fails and no object's resourceVersion
 * ever goes back. The verdicts are on what is served, listed and heard; the times measured are logged for
 * {@code docs/reliability.md}.
 */
class ApiServerFaultsTest {

  private static final Logger LOG = LoggerFactory.getLogger(ApiServerFaultsTest.class);

  private static final int OBJECTS = 200;
  /** What a run of calls that never wait for the network is given. */
  private static final Duration NO_WAITING = Duration.ofMinutes(1);
  /** An upper bound for slow CI machines. */
  private static final Duration WAIT = Duration.ofSeconds(30);

  @AutoClose
  private final FaultHarness faults = new FaultHarness(OBJECTS, port -> KubeClients.builder()
      .masterUrl("http://" + InetAddress.getLoopbackAddress().getHostAddress() + ":" + port).build());
  private EmbeddedApiServer server;
  private final WatchStoreMetrics metrics = new WatchStoreMetrics();

  private void startServer(EmbeddedApiServer.Builder builder) {
    server = faults.startServer(builder);
  }

  private WatchStoreStrategy strategy(KubernetesClient client) {
    return faults.closeLater(WatchStoreStrategy.builder(client).metrics(metrics).build());
  }

  /** The relists the stores started (a WatchList request or a LIST, whichever the server serves). */
  private long relists() {
    for (MetricSnapshot metric : metrics.collect()) {
      if (metric instanceof CounterSnapshot counter
          && counter.getMetadata().getName().startsWith("nodelet_store_watch_relists")) {
        return (long) counter.getDataPoints().stream().mapToDouble(CounterDataPointSnapshot::getValue).sum();
      }
    }
    return 0;
  }

  /** The objects whose watch the store has up (its open-watches gauge): a failed watch is not counted. */
  private long storeWatches() {
    for (MetricSnapshot metric : metrics.collect()) {
      if (metric instanceof GaugeSnapshot gauge
          && gauge.getMetadata().getName().equals("nodelet_store_watch_open_watches")) {
        return (long) gauge.getDataPoints().stream().mapToDouble(GaugeDataPointSnapshot::getValue).sum();
      }
    }
    return 0;
  }

  private long update(int i, String value) {
    return faults.update(i, value);
  }

  private long lists() {
    return server.requestCount(Verb.LIST, "configmaps");
  }

  /** {@value #OBJECTS} objects, each referenced by the store and synced, each with an open watch. */
  private ObjectStore<ConfigMap> watchedObjects(ObjectStore.Listener<ConfigMap> listener) {
    faults.createAll();
    ObjectStore<ConfigMap> store = faults.closeLater(strategy(faults.nodeletClient(server.port()))
        .createStore(ResourceType.CONFIG_MAPS, listener));
    for (int i = 0; i < OBJECTS; i++) {
      store.addReference(NS, name(i), "pod-" + i);
    }
    await().atMost(WAIT).until(() -> faults.allSucceed(store::get));
    // the watches open after the lists that synced the items
    await().atMost(WAIT).until(() -> server.openWatches("configmaps") == OBJECTS);
    return store;
  }

  private ObjectStore<ConfigMap> watchedObjects() {
    return watchedObjects(ObjectStore.Listener.none());
  }

  private static long millisSince(long startNanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
  }

  @Test
  void aRestartedApiServerIsFollowedAgainAndEveryGetIsFreshWithinFiveSeconds() {
    startServer(EmbeddedApiServer.builder());
    ObjectStore<ConfigMap> store = watchedObjects();
    int port = server.port();

    try (Reader reader = new Reader(store)) {
      server.stop();
      // while it is away the last copies are served, without an error and without waiting: once every watch of the
      // store has failed to come back (it knows the server is away), the reader still reads every object
      await().atMost(WAIT).until(() -> server.openWatches("configmaps") == 0 && storeWatches() == 0);
      long passes = reader.passes.get();
      await().atMost(WAIT).until(() -> reader.passes.get() >= passes + 3);
      assertThat(reader.errors.get()).isNull();

      server.start();
      long restarted = System.nanoTime();
      assertThat(server.port()).isEqualTo(port);
      for (int i = 0; i < OBJECTS; i++) {
        reader.expect(i, update(i, "2"));
      }
      long written = millisSince(restarted);
      await().atMost(WAIT).until(reader::allFresh);
      long watching = awaitWatches(restarted);

      long fresh = reader.lastFreshMillis(restarted);
      long lag = reader.maxLagMillis(restarted);
      LOG.info("Restart with {} watched objects: all updates written {} ms, every get fresh {} ms, all {} watches "
          + "open again {} ms after the restart; each get fresh at most {} ms after its update", OBJECTS, written,
          fresh, OBJECTS, watching, lag);
      reader.assertNothingWentBack();
    }
  }

  @Test
  void aWatchTooFarBehindTheHistoryGetsGoneAndRelists() {
    startServer(EmbeddedApiServer.builder().historySize(50));
    ObjectStore<ConfigMap> store = watchedObjects();
    long relistsBefore = relists();

    try (Reader reader = new Reader(store)) {
      // while no watch can resume, every object changes: more events than the history keeps
      server.failNext(Verb.WATCH, "configmaps", Integer.MAX_VALUE, 500);
      server.cutWatches();
      await().atMost(WAIT).until(() -> server.openWatches("configmaps") == 0);
      for (int i = 0; i < OBJECTS; i++) {
        reader.expect(i, update(i, "2"));
      }
      server.clearFailures();
      long resumable = System.nanoTime();
      await().atMost(WAIT).until(reader::allFresh);
      long watching = awaitWatches(resumable);

      long fresh = reader.lastFreshMillis(resumable);
      LOG.info("410 Gone with {} watched objects: every get fresh {} ms, all watches open {} ms after watches could "
          + "resume; {} relists", OBJECTS, fresh, watching, relists() - relistsBefore);
      // each watch had to list again: its resourceVersion had left the history
      assertThat(relists() - relistsBefore).isGreaterThanOrEqualTo(OBJECTS);
      reader.assertNothingWentBack();
    }
  }

  @Test
  void aGoneAnswerToTheWatchRequestItselfRelistsToo() {
    startServer(EmbeddedApiServer.builder());
    ObjectStore<ConfigMap> store = watchedObjects();
    long relistsBefore = relists();

    // not a 410 event in the stream, as the API server sends, but the answer to the request (a proxy, say)
    server.failNext(Verb.WATCH, "configmaps", OBJECTS, 410);
    server.cutWatches();
    await().atMost(WAIT).until(() -> relists() - relistsBefore >= OBJECTS);
    await().atMost(WAIT).until(() -> server.openWatches("configmaps") == OBJECTS);
    assertThat(faults.allSucceed(store::get)).isTrue();
  }

  @Test
  void aCutWatchStreamResumesWithoutMissingAnUpdate() {
    startServer(EmbeddedApiServer.builder());
    HeardVersions heard = new HeardVersions();
    ObjectStore<ConfigMap> store = watchedObjects(heard);
    long listsBefore = lists();
    long relistsBefore = relists();
    Map<String, List<Long>> written = new ConcurrentHashMap<>();

    try (Reader reader = new Reader(store)) {
      for (int round = 2; round <= 3; round++) {
        await().atMost(WAIT).until(() -> server.openWatches("configmaps") == OBJECTS);
        server.cutWatches();
        long cut = System.nanoTime();
        // written while the watches are down or coming back
        for (int i = 0; i < OBJECTS; i++) {
          long version = update(i, String.valueOf(round));
          reader.expect(i, version);
          written.computeIfAbsent(name(i), n -> new ArrayList<>()).add(version);
        }
        await().atMost(WAIT).until(reader::allFresh);
        long lag = reader.maxLagMillis(cut);
        LOG.info("Cut {} watch streams: every get fresh {} ms after the cut, each at most {} ms after its update",
            OBJECTS, reader.lastFreshMillis(cut), lag);
      }
      reader.assertNothingWentBack();
    }
    // resumed from the last resourceVersion: no relist, and every single update was seen
    assertThat(lists()).isEqualTo(listsBefore);
    assertThat(relists()).isEqualTo(relistsBefore);
    written.forEach((name, versions) -> assertThat(heard.of(name)).as(name).containsAll(versions));
  }

  @Test
  void anUnreachableApiServerNeitherBlocksRegistrationNorHangsAGetAndIsUsedOnceItAppears() {
    FaultHarness.Outage outage = faults.unreachableUntilItAppears(this::manager, NO_WAITING, WAIT,
        (name, failure) -> {
          // a get waits out the sync bound (1 s), not a client's retries, and fails with the first attempt's error
          assertThat(failure).isInstanceOf(CacheSyncException.class)
              .hasMessageStartingWith("failed to sync configmaps cache: timed out waiting for the condition "
                  + "(configmaps \"" + NS + "\"/\"" + name + "\": the API server is unreachable "
                  + "(java.net.ConnectException");
        });
    LOG.info("Watch store, API server unreachable, {} objects: {}", OBJECTS, outage);
    assertThat(outage.failedAfterMillis()).allSatisfy(ms -> assertThat(ms).isGreaterThanOrEqualTo(1_000L));
    // and the warm-up pod's object, which does not exist, is watched too
    await().atMost(WAIT).until(() -> faults.server().openWatches("configmaps") == OBJECTS + 1);
  }

  private long awaitWatches(long sinceNanos) {
    await().atMost(WAIT).until(() -> server.openWatches("configmaps") == OBJECTS);
    return millisSince(sinceNanos);
  }

  /**
   * Gets every object in a loop on its own thread: records when each first shows the version a test expects, any
   * resourceVersion lower than one served before for the same object, and the first failed get.
   */
  private static final class Reader implements AutoCloseable {
    private final ObjectStore<ConfigMap> store;
    /** Per object: the version a test waits for and when a get first returned it (0 until then), or null. */
    private final AtomicReferenceArray<Expected> expected = new AtomicReferenceArray<>(OBJECTS);
    private final long[] last = new long[OBJECTS];
    private final List<String> wentBack = new ArrayList<>();
    final AtomicReference<RuntimeException> errors = new AtomicReference<>();
    /** Full rounds over every object so far. */
    final AtomicLong passes = new AtomicLong();
    private final Thread thread;
    private volatile boolean running = true;

    Reader(ObjectStore<ConfigMap> store) {
      this.store = store;
      this.thread = new Thread(this::run, "fault-test-reader");
      thread.setDaemon(true);
      thread.start();
    }

    /** Object {@code i} is fresh once a get returns this version or a later one. */
    void expect(int i, long version) {
      expected.set(i, new Expected(version, System.nanoTime(), 0));
    }

    private void run() {
      while (running) {
        for (int i = 0; i < OBJECTS; i++) {
          ConfigMap object;
          try {
            object = store.get(NS, name(i));
          } catch (RuntimeException e) {
            errors.compareAndSet(null, e);
            continue;
          }
          long version = version(object);
          if (version < last[i]) {
            synchronized (wentBack) {
              wentBack.add(name(i) + " went back from " + last[i] + " to " + version);
            }
          }
          last[i] = version;
          Expected want = expected.get(i);
          if (want != null && want.freshAt() == 0 && version >= want.version()) {
            // only if the test did not expect a newer version meanwhile
            expected.compareAndSet(i, want, new Expected(want.version(), want.writtenAt(), System.nanoTime()));
          }
        }
        passes.incrementAndGet();
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
      }
    }

    boolean allFresh() {
      for (int i = 0; i < OBJECTS; i++) {
        Expected want = expected.get(i);
        if (want == null || want.freshAt() == 0) {
          return false;
        }
      }
      return true;
    }

    /** Milliseconds from {@code sinceNanos} until the last object was first seen fresh. */
    long lastFreshMillis(long sinceNanos) {
      long lastFresh = sinceNanos;
      for (int i = 0; i < OBJECTS; i++) {
        Expected want = expected.get(i);
        lastFresh = Math.max(lastFresh, want == null ? 0 : want.freshAt());
      }
      return TimeUnit.NANOSECONDS.toMillis(lastFresh - sinceNanos);
    }

    /** The longest time in ms from a write being acknowledged, or from {@code sinceNanos}, to a fresh get. */
    long maxLagMillis(long sinceNanos) {
      long lag = 0;
      for (int i = 0; i < OBJECTS; i++) {
        Expected want = expected.get(i);
        lag = Math.max(lag, want.freshAt() - Math.max(sinceNanos, want.writtenAt()));
      }
      return TimeUnit.NANOSECONDS.toMillis(lag);
    }

    void assertNothingWentBack() {
      synchronized (wentBack) {
        assertThat(wentBack).as("resourceVersions served after a later one").isEmpty();
      }
      assertThat(errors.get()).as("a failed get").isNull();
    }

    @Override
    public void close() {
      running = false;
      try {
        thread.join(TimeUnit.SECONDS.toMillis(10));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** A version a test waits for: when its write was acknowledged, and when a get first returned it (or 0). */
  private record Expected(long version, long writtenAt, long freshAt) {
  }

  /** The resourceVersions the store's watches reported per object. */
  private static final class HeardVersions implements ObjectStore.Listener<ConfigMap> {
    private final Map<String, Set<Long>> heard = new ConcurrentHashMap<>();

    @Override
    public void changed(ConfigMap object) {
      heard.computeIfAbsent(object.getMetadata().getName(), n -> ConcurrentHashMap.newKeySet()).add(version(object));
    }

    @Override
    public void deleted(String namespace, String name, String resourceVersion) {
      // nothing is deleted in these tests
    }

    Set<Long> of(String name) {
      return heard.getOrDefault(name, Set.of());
    }
  }

  /** A ConfigMap manager on the watch strategy over {@code client}, closed with the harness. */
  private ObjectManager<ConfigMap> manager(KubernetesClient client) {
    SwitchableObjectManager<ConfigMap> manager = faults.closeLater(ObjectManagers.configMaps(client).build());
    manager.useStrategy("watch", strategy(client));
    return manager;
  }
}
