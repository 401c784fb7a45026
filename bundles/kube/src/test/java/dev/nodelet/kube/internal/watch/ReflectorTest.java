package dev.nodelet.kube.internal.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.kube.internal.KubeClientFactory;
import dev.nodelet.kube.internal.KubeSettings;
import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.kube.watch.ReflectorException;
import dev.nodelet.kube.watch.ReflectorListener;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The reflector against the embedded API server: real HTTP, real watches, requests counted by the server. */
class ReflectorTest {

  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines

  private EmbeddedApiServer server;
  private KubernetesClient admin;
  private KubernetesClient client;
  private final List<ReflectorEngine> engines = new ArrayList<>();

  /** Whether the server speaks TLS, where the client's watches are HTTP/2 streams; plain HTTP/1.1 otherwise. */
  boolean tls() {
    return false;
  }

  void startServer(int historySize) {
    if (server != null) {
      client.close();
      admin.close();
      server.close();
    }
    EmbeddedApiServer.Builder builder = EmbeddedApiServer.builder().historySize(historySize);
    server = (tls() ? builder.tls() : builder).build().start();
    admin = server.newClient();
    // Nodelet's own client: no HTTP logging, no retries of its own
    KubeSettings.Builder settings = KubeSettings.builder().nodeName("node-a");
    if (tls()) {
      try {
        Path kubeconfig = Files.createTempFile("reflector-test", ".kubeconfig");
        kubeconfig.toFile().deleteOnExit();
        settings.kubeconfig(server.writeKubeconfig(kubeconfig).toString());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    } else {
      settings.masterUrl(server.url());
    }
    client = new KubeClientFactory().create(settings.build());
  }

  /**
   * The tests wait for hundreds of requests one after another (closing while in flight): at Awaitility's default
   * 100 ms between checks most of their time went into waiting for the next check.
   */
  @BeforeAll
  static void checkOften() {
    Awaitility.setDefaultPollInterval(Duration.ofMillis(10));
  }

  @AfterAll
  static void checkAsUsual() {
    Awaitility.reset();
  }

  @BeforeEach
  void start() {
    startServer(10_000);
  }

  @AfterEach
  void stop() {
    engines.forEach(ReflectorEngine::close);
    client.close();
    admin.close();
    server.close();
  }

  private ReflectorEngine engine(ReflectorEngine.Builder builder) {
    ReflectorEngine engine = builder.build();
    engines.add(engine);
    return engine;
  }

  private ReflectorEngine engine() {
    return engine(ReflectorEngine.builder(client).backoff(Duration.ofMillis(20), Duration.ofMillis(200)));
  }

  private ConfigMap put(String name, String value) {
    return admin.configMaps().inNamespace("default").resource(new ConfigMapBuilder().withNewMetadata()
        .withName(name).withNamespace("default").endMetadata().addToData("k", value).build()).serverSideApply();
  }

  /** Records what a reflector reports, as "add a=1", "update a=2", "delete a", "synced". */
  static class Recorder implements ReflectorListener<ConfigMap> {
    final List<String> events = new CopyOnWriteArrayList<>();
    final List<ReflectorException> errors = new CopyOnWriteArrayList<>();
    final List<String> restarts = new CopyOnWriteArrayList<>();

    @Override
    public void onAdd(ConfigMap object) {
      events.add("add " + object.getMetadata().getName() + "=" + object.getData().get("k"));
    }

    @Override
    public void onUpdate(ConfigMap oldObject, ConfigMap newObject) {
      events.add("update " + newObject.getMetadata().getName() + "=" + newObject.getData().get("k"));
    }

    @Override
    public void onDelete(ConfigMap object) {
      events.add("delete " + object.getMetadata().getName());
    }

    @Override
    public void onSynced(String resourceVersion) {
      events.add("synced");
    }

    @Override
    public void onRestart(String resourceVersion) {
      restarts.add(resourceVersion);
    }

    @Override
    public void onGone(String resourceVersion) {
      events.add("gone");
    }

    @Override
    public void onError(ReflectorException error) {
      errors.add(error);
    }
  }

  @Test
  void syncsWithOneWatchListRequestThenFollowsUpdatesAndDeletes() {
    put("a", "1");
    put("b", "1");
    Recorder recorder = new Recorder();
    Reflector<ConfigMap> reflector = engine().reflector(ConfigMap.class).namespace("default").listener(recorder)
        .start();

    await().atMost(WAIT).until(reflector::isSynced);
    // the listener hears of the sync on its callback thread, a moment after the store has it
    await().atMost(WAIT).until(() -> recorder.events.contains("synced"));
    assertThat(recorder.events).containsExactlyInAnyOrder("add a=1", "add b=1", "synced");
    assertThat(recorder.events.get(2)).isEqualTo("synced");
    assertThat(reflector.get("default", "a")).hasValueSatisfying(c -> assertThat(c.getData()).containsEntry("k", "1"));
    // WatchList: the initial state came with the watch; no LIST at all
    assertThat(server.requestCount(Verb.LIST, "configmaps")).isZero();
    assertThat(server.requestCount(Verb.WATCH, "configmaps")).isEqualTo(1);

    put("a", "2");
    admin.configMaps().inNamespace("default").withName("b").delete();
    put("c", "1");
    await().atMost(WAIT).until(() -> recorder.events.size() == 6);
    assertThat(recorder.events.subList(3, 6)).containsExactly("update a=2", "delete b", "add c=1");
    assertThat(reflector.list()).extracting(c -> c.getMetadata().getName()).containsExactlyInAnyOrder("a", "c");
    assertThat(reflector.resourceVersion()).contains(Long.toString(server.resourceVersion()));
    assertThat(server.requestCount(Verb.WATCH, "configmaps")).isEqualTo(1);
  }

  @Test
  void aWatchEventIsReportedOnTheThreadThatReadItNotHandedToTheCallbackPool() {
    put("a", "1");
    List<String> threads = new CopyOnWriteArrayList<>();
    Recorder recorder = new Recorder() {
      @Override
      public void onUpdate(ConfigMap oldObject, ConfigMap newObject) {
        threads.add(Thread.currentThread().getName());
        super.onUpdate(oldObject, newObject);
      }
    };
    Reflector<ConfigMap> reflector = engine().reflector(ConfigMap.class).namespace("default").listener(recorder)
        .start();
    await().atMost(WAIT).until(reflector::isSynced);

    put("a", "2");
    put("a", "3");

    await().atMost(WAIT).until(() -> recorder.events.contains("update a=3"));
    // the transport's thread (the client's I/O threads): waking a pool thread per event was most of its latency
    assertThat(threads).hasSize(2).noneMatch(name -> name.startsWith(Engine.THREAD_PREFIX));
  }

  @Test
  void selectorsAndNamespaceNarrowWhatIsReflected() {
    put("a", "1");
    put("b", "1");
    Recorder recorder = new Recorder();
    Reflector<ConfigMap> reflector = engine().reflector(ConfigMap.class).namespace("default")
        .fieldSelector("metadata.name=b").listener(recorder).start();
    await().atMost(WAIT).until(reflector::isSynced);
    assertThat(reflector.list()).extracting(c -> c.getMetadata().getName()).containsExactly("b");
    assertThat(server.openWatches("configmaps", "metadata.name=b")).isEqualTo(1);
  }

  @Test
  void aServerThatRefusesWatchListIsListedThenWatchedAndRemembered() {
    put("a", "1");
    server.failNext(Verb.WATCH, "configmaps", 1, 422); // what a server without the WatchList feature answers
    ReflectorEngine engine = engine();
    Recorder first = new Recorder();
    Reflector<ConfigMap> reflector = engine.reflector(ConfigMap.class).namespace("default").listener(first).start();
    await().atMost(WAIT).until(() -> first.events.contains("synced"));
    assertThat(first.events).containsExactly("add a=1", "synced");
    assertThat(server.requestCount(Verb.LIST, "configmaps")).isEqualTo(1);
    await().atMost(WAIT).until(() -> server.openWatches("configmaps") == 1);
    assertThat(first.errors).isEmpty(); // the fallback is not a failure

    // a second reflector of the same engine goes straight to LIST then WATCH
    long watches = server.requestCount(Verb.WATCH, "configmaps");
    Reflector<ConfigMap> second = engine.reflector(ConfigMap.class).namespace("default").listener(new Recorder())
        .start();
    await().atMost(WAIT).until(() -> second.isSynced() && server.openWatches("configmaps") == 2);
    assertThat(server.requestCount(Verb.LIST, "configmaps")).isEqualTo(2);
    assertThat(server.requestCount(Verb.WATCH, "configmaps")).isEqualTo(watches + 1);

    put("a", "2");
    await().atMost(WAIT).until(() -> first.events.contains("update a=2"));
  }

  @Test
  void resumesAfterACutAndAfterAServerRestartWithoutListingAgain() {
    put("a", "1");
    Recorder recorder = new Recorder();
    // a watch sent while the server goes away may wait on a connection that stays open: its deadline ends it
    // within this test's waits
    Engine engine = new Engine(client, EngineSettings.builder().backoff(Duration.ofMillis(20), Duration.ofMillis(200))
        .responseTimeout(Duration.ofSeconds(5)).build());
    engines.add(engine);
    Reflector<ConfigMap> reflector = engine.reflector(ConfigMap.class).namespace("default").listener(recorder)
        .start();
    await().atMost(WAIT).until(reflector::isSynced);

    String synced = reflector.resourceVersion().orElseThrow();
    assertThat(recorder.restarts).isEmpty();
    server.cutWatches();
    await().atMost(WAIT).until(() -> server.requestCount(Verb.WATCH, "configmaps") == 2
        && server.openWatches("configmaps") == 1);
    // told once the new watch is open, with the version it resumed from
    await().atMost(WAIT).until(() -> recorder.restarts.equals(List.of(synced)));
    put("a", "2");
    await().atMost(WAIT).until(() -> recorder.events.contains("update a=2"));

    server.stop();
    server.start();
    put("a", "3");
    await().atMost(WAIT).until(() -> recorder.events.contains("update a=3"));

    // one WatchList at the start, then only watches from the last resourceVersion: no LIST, no second sync
    assertThat(server.requestCount(Verb.LIST, "configmaps")).isZero();
    assertThat(recorder.events).containsExactly("add a=1", "synced", "update a=2", "update a=3");
  }

  @Test
  void aQuietWatchOutlivesItsResponseDeadline() {
    put("a", "1");
    Duration deadline = Duration.ofMillis(500);
    Engine engine = new Engine(client, EngineSettings.builder().responseTimeout(deadline)
        .backoff(Duration.ofMillis(20), Duration.ofMillis(200)).build());
    engines.add(engine);
    Recorder recorder = new Recorder();
    Reflector<ConfigMap> reflector = engine.reflector(ConfigMap.class).namespace("default").listener(recorder)
        .start();
    // (a cold, loaded machine may miss so short a deadline before the first answer: that watch restarts)
    await().atMost(WAIT).until(() -> reflector.isSynced() && server.openWatches("configmaps") == 1);
    int errors = recorder.errors.size();
    long watches = server.requestCount(Verb.WATCH, "configmaps");

    // the deadline is the headers': once they arrived nothing is left to fire, however long nothing happens on the
    // watch (an engine with no timer task and no callback left can end it no more)
    await().atMost(WAIT).until(() -> idle(engine));
    assertThat(recorder.errors).hasSize(errors);
    assertThat(server.requestCount(Verb.WATCH, "configmaps")).isEqualTo(watches);
    assertThat(server.openWatches("configmaps")).isEqualTo(1);
    put("a", "2");
    await().atMost(WAIT).until(() -> recorder.events.contains("update a=2"));
  }

  @Test
  void goneListsExactlyOnceAndReportsTheDifference() {
    stop();
    startServer(5);
    put("a", "1");
    put("b", "1");
    Recorder recorder = new Recorder();
    Reflector<ConfigMap> reflector = engine(ReflectorEngine.builder(client).watchList(false)
        .backoff(Duration.ofMillis(20), Duration.ofMillis(100))).reflector(ConfigMap.class).namespace("default")
        .listener(recorder).start();
    await().atMost(WAIT).until(() -> reflector.isSynced() && server.openWatches("configmaps") == 1);
    assertThat(server.requestCount(Verb.LIST, "configmaps")).isEqualTo(1);

    // the watch is down while more changes happen than the server's history keeps
    server.failNext(Verb.WATCH, "configmaps", 1_000, 503);
    server.cutWatches();
    admin.configMaps().inNamespace("default").withName("b").delete();
    for (int i = 2; i <= 10; i++) {
      put("a", Integer.toString(i));
    }
    await().atMost(WAIT).until(() -> !recorder.errors.isEmpty());
    server.clearFailures();

    await().atMost(WAIT).until(() -> recorder.events.contains("update a=10") && reflector.isSynced()
        && server.openWatches("configmaps") == 1);
    assertThat(server.requestCount(Verb.LIST, "configmaps")).isEqualTo(2);
    assertThat(recorder.events.subList(0, 2)).containsExactlyInAnyOrder("add a=1", "add b=1");
    assertThat(recorder.events.subList(2, recorder.events.size())).containsExactly("synced", "gone", "delete b",
        "update a=10", "synced");
    assertThat(recorder.errors).allSatisfy(e -> assertThat(e.status()).isEqualTo(503));
  }

  @Test
  void resumingFromAKeptStateWatchesWithoutListingAndReportsAgainstThatState() {
    ConfigMap kept = put("a", "1");
    put("a", "2"); // changed while the owner was away
    Recorder recorder = new Recorder();
    Reflector<ConfigMap> reflector = engine().reflector(ConfigMap.class).namespace("default")
        .fieldSelector("metadata.name=a").resumeFrom(kept.getMetadata().getResourceVersion(), List.of(kept))
        .listener(recorder).start();
    assertThat(reflector.get("default", "a")).contains(kept);

    await().atMost(WAIT).until(() -> recorder.events.contains("update a=2"));
    assertThat(reflector.isSynced()).isTrue();
    put("a", "3");
    await().atMost(WAIT).until(() -> recorder.events.contains("update a=3"));
    // one watch from the kept version: no LIST, no WatchList, nothing re-added
    assertThat(recorder.events).containsExactly("update a=2", "update a=3");
    assertThat(server.requestCount(Verb.LIST, "configmaps")).isZero();
    assertThat(server.requestCount(Verb.WATCH, "configmaps")).isEqualTo(1);
    assertThat(recorder.restarts).isEmpty(); // the first watch of a resumed reflector is no restart
    assertThat(recorder.errors).isEmpty();
  }

  @Test
  void resumingFromAVersionTheServerNoLongerHasListsOnceAndReportsTheDifference() {
    stop();
    startServer(5);
    ConfigMap a = put("a", "1");
    ConfigMap b = put("b", "1");
    admin.configMaps().inNamespace("default").withName("b").delete();
    for (int i = 2; i <= 10; i++) {
      put("a", Integer.toString(i));
    }
    Recorder recorder = new Recorder();
    Reflector<ConfigMap> reflector = engine(ReflectorEngine.builder(client).watchList(false)
        .backoff(Duration.ofMillis(20), Duration.ofMillis(100))).reflector(ConfigMap.class).namespace("default")
        .resumeFrom(b.getMetadata().getResourceVersion(), List.of(a, b)).listener(recorder).start();

    await().atMost(WAIT).until(() -> reflector.isSynced() && server.openWatches("configmaps") == 1);
    assertThat(recorder.events).containsExactly("gone", "delete b", "update a=10", "synced");
    assertThat(server.requestCount(Verb.LIST, "configmaps")).isEqualTo(1);
    assertThat(server.requestCount(Verb.WATCH, "configmaps")).isEqualTo(2);
    assertThat(reflector.list()).extracting(c -> c.getMetadata().getName()).containsExactly("a");
  }

  @Test
  void aResumedWatchThatCannotOpenRetriesWithoutListing() {
    ConfigMap kept = put("a", "1");
    server.failNext(Verb.WATCH, "configmaps", 3, 503);
    Recorder recorder = new Recorder();
    Reflector<ConfigMap> reflector = engine().reflector(ConfigMap.class).namespace("default")
        .resumeFrom(kept.getMetadata().getResourceVersion(), List.of(kept)).listener(recorder).start();
    await().atMost(WAIT).until(() -> recorder.errors.size() == 3 && server.openWatches("configmaps") == 1);
    put("a", "2");
    await().atMost(WAIT).until(() -> recorder.events.contains("update a=2"));
    assertThat(reflector.isSynced()).isTrue();
    assertThat(recorder.events).containsExactly("update a=2");
    assertThat(server.requestCount(Verb.LIST, "configmaps")).isZero();
    assertThat(server.requestCount(Verb.WATCH, "configmaps")).isEqualTo(4);
    assertThat(recorder.restarts).containsExactly(kept.getMetadata().getResourceVersion());
  }

  @Test
  void closingWhileListsAndWatchesAreInFlightLeavesNoWatchAndNoThread() {
    put("a", "1");
    for (boolean watchList : new boolean[] {true, false}) {
      // kept for @AfterEach too: a failure here must not leave its threads to the thread counts of later tests
      ReflectorEngine engine = engine(ReflectorEngine.builder(client).watchList(watchList));
      for (int i = 0; i < 100; i++) {
        // counted before the start: the request may reach the server before start() returns to this thread
        long requests = requests();
        Reflector<ConfigMap> reflector = engine.reflector(ConfigMap.class).namespace("default")
            .listener(new Recorder()).start();
        if (i % 4 == 1) {
          // a request reached the server (this one, or the late one of a reflector closed before it); the response
          // may or may not have arrived
          await().atMost(WAIT).until(() -> requests() > requests);
        } else if (i % 4 == 2) {
          await().atMost(WAIT).until(reflector::isSynced);
        }
        reflector.close();
      }
      await().atMost(WAIT).until(() -> server.openWatches("configmaps") == 0);
      engine.close();
      // a pool ends its last worker just after awaitTermination returns
      await().atMost(WAIT).until(() -> engineThreads().isEmpty());
    }
  }

  @Test
  void closingTheEngineClosesItsReflectorsAndRefusesNewOnes() {
    ReflectorEngine engine = engine(ReflectorEngine.builder(client));
    Reflector<ConfigMap> reflector = engine.reflector(ConfigMap.class).listener(new Recorder()).start();
    await().atMost(WAIT).until(() -> server.openWatches("configmaps") == 1);
    engine.close();
    await().atMost(WAIT).until(() -> server.openWatches("configmaps") == 0);
    assertThat(reflector.isSynced()).isFalse();
    await().atMost(WAIT).until(() -> engineThreads().isEmpty());
    assertThatThrownBy(() -> engine.reflector(ConfigMap.class).listener(new Recorder()).start())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
  }

  @Test
  void restartsAfterACutGoThroughTheSharedBucket() {
    // the bucket's own clock: a restart is checked again against it when sent, so it must advance
    Engine engine = new Engine(client, EngineSettings.builder().restartRate(1_000).restartBurst(5).build(),
        System::nanoTime, () -> 0.0);
    engines.add(engine);
    List<Reflector<ConfigMap>> reflectors = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      reflectors.add(engine.reflector(ConfigMap.class).namespace("ns-" + i).listener(new Recorder()).start());
    }
    await().atMost(WAIT).until(() -> server.openWatches("configmaps") == 10);
    assertThat(engine.limiter.reservations()).isZero(); // first starts do not wait for the bucket
    assertThat(engine.limiter.started()).isZero();

    server.cutWatches();
    await().atMost(WAIT).until(() -> server.openWatches("configmaps") == 10
        && server.requestCount(Verb.WATCH, "configmaps") == 20);
    assertThat(engine.limiter.started()).as("restarts that passed the bucket").isEqualTo(10);
    if (tls()) {
      // one reservation each: the HTTP/2 pool holds a restart that does not conform when its stream would start
      assertThat(engine.limiter.reservations()).isEqualTo(10);
    } else {
      // one reservation each, and one more for each restart that ran too late to conform when sent
      assertThat(engine.limiter.reservations() - engine.limiter.refused()).isEqualTo(10);
    }
  }

  @Test
  void manyReflectorsSyncWithOneRequestEachOnTheSameFewThreads() {
    int count = 150; // more than one HTTP/2 connection's 100 concurrent streams
    for (int i = 0; i < count; i++) {
      put("cm-" + i, Integer.toString(i));
    }
    ReflectorEngine engine = engine();
    List<Reflector<ConfigMap>> reflectors = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      reflectors.add(engine.reflector(ConfigMap.class).namespace("default").fieldSelector("metadata.name=cm-" + i)
          .listener(new Recorder()).start());
    }
    await().atMost(WAIT).until(() -> reflectors.stream().allMatch(Reflector::isSynced));
    await().atMost(WAIT).until(() -> server.openWatches("configmaps") == count);
    assertThat(reflectors.get(42).get("default", "cm-42")).isPresent();
    // WatchList: one request per object, no LIST
    assertThat(server.requestCount(Verb.WATCH, "configmaps")).isEqualTo(count);
    assertThat(server.requestCount(Verb.LIST, "configmaps")).isZero();
    // 2 callback threads and 1 timer at most, however many reflectors
    assertThat(engineThreads()).hasSizeLessThanOrEqualTo(3);
  }

  @Test
  void badOptionsAreNamed() {
    ReflectorEngine engine = engine();
    assertThatThrownBy(() -> engine.reflector(ConfigMap.class).start())
        .hasMessageContaining("needs a listener");
    assertThatThrownBy(() -> engine.reflector(ConfigMap.class).namespace(" "))
        .hasMessageContaining("namespace must not be empty");
    assertThatThrownBy(() -> engine.reflector(ConfigMap.class).resumeFrom("", List.of()))
        .hasMessageContaining("resumeFrom's resourceVersion must not be empty");
    assertThatThrownBy(() -> engine.reflector(ConfigMap.class).resumeFrom("7", null))
        .hasMessageContaining("pass an empty list");
    assertThatThrownBy(() -> ReflectorEngine.builder(client).restartRate(-1).build())
        .hasMessageContaining("restart rate");
  }

  /** Nothing scheduled and nothing running: no deadline, retry or callback of a reflector is left to happen. */
  private static boolean idle(Engine engine) {
    return engine.timer.getQueue().isEmpty() && engine.timer.getActiveCount() == 0
        && engine.callbacks.getQueue().isEmpty() && engine.callbacks.getActiveCount() == 0;
  }

  /** The lists and watches of ConfigMaps the server has received. */
  private long requests() {
    return server.requestCount(Verb.WATCH, "configmaps") + server.requestCount(Verb.LIST, "configmaps");
  }

  static List<String> engineThreads() {
    return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
        .filter(n -> n.startsWith(Engine.THREAD_PREFIX)).toList();
  }
}
