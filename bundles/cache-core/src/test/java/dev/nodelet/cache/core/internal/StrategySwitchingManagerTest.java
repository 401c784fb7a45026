package dev.nodelet.cache.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.objectcache.RegisteredPod;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.objectcache.testing.MutableClock;
import dev.nodelet.cache.core.testing.RecordingStrategy;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class StrategySwitchingManagerTest {

  private EmbeddedApiServer server;
  private KubernetesClient client;
  private final MutableClock clock = new MutableClock();
  private final List<String> log = Collections.synchronizedList(new ArrayList<>());
  private RecordingStrategy first;
  private RecordingStrategy second;
  private SwitchableObjectManager<ConfigMap> manager;

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
    client = server.newClient();
    first = new RecordingStrategy("first", client, clock, log);
    second = new RecordingStrategy("second", client, log);
    manager = ObjectManagers.configMaps(client).clock(clock).build();
    for (String name : List.of("a", "b", "c")) {
      client.configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
          .endMetadata().addToData("k", name).build()).create();
    }
  }

  @AfterEach
  void stop() {
    manager.close();
    client.close();
    server.close();
  }

  /** A pod in namespace ns that references the given ConfigMaps, each through a volume. */
  private static Pod pod(String name, String uid, String... configMaps) {
    return new PodBuilder().withNewMetadata().withNamespace("ns").withName(name).withUid(uid).endMetadata()
        .withNewSpec().withVolumes(Arrays.stream(configMaps).map(c -> new VolumeBuilder().withName("v-" + c)
            .withNewConfigMap().withName(c).endConfigMap().build()).toList())
        .endSpec().build();
  }

  private List<String> takeLog() {
    synchronized (log) {
      List<String> copy = List.copyOf(log);
      log.clear();
      return copy;
    }
  }

  @Test
  void registeringAPodAddsAReferenceForEveryName() {
    manager.useStrategy("first", first);
    takeLog();
    manager.registerPod(pod("p", "u1", "a", "b"));
    assertThat(takeLog()).containsExactly("first add ns/a u1", "first add ns/b u1");
    assertThat(manager.get("ns", "a").getData()).containsEntry("k", "a");
    assertThatThrownBy(() -> manager.get("ns", "c"))
        .isInstanceOf(NotRegisteredException.class).hasMessage("object \"ns\"/\"c\" not registered");
  }

  @Test
  void registeringAgainAddsOnlyNewNamesAndDeletesDroppedOnes() {
    manager.useStrategy("first", first);
    manager.registerPod(pod("p", "u1", "a", "b"));
    takeLog();
    manager.registerPod(pod("p", "u1", "b", "c"));
    assertThat(takeLog()).containsExactly("first add ns/c u1", "first delete ns/a u1");
    manager.registerPod(pod("p", "u1", "b", "c"));
    assertThat(takeLog()).isEmpty();
    assertThat(first.store(0).references()).isEqualTo(Map.of("ns/b", Map.of("u1", 1), "ns/c", Map.of("u1", 1)));
  }

  @Test
  void podsAreKeyedByNamespaceNameAndUid() {
    manager.useStrategy("first", first);
    manager.registerPod(pod("p", "u1", "a"));
    manager.registerPod(pod("p", "u2", "a"));
    manager.registerPod(pod("q", "u1", "a"));
    assertThat(manager.registeredPods()).containsExactly(
        new RegisteredPod("ns", "p", "u1", List.of("a")),
        new RegisteredPod("ns", "p", "u2", List.of("a")),
        new RegisteredPod("ns", "q", "u1", List.of("a")));
    assertThat(manager.objects()).extracting(CachedObject::references).containsExactly(3);
    manager.unregisterPod(pod("p", "u2"));
    assertThat(manager.registeredPods()).extracting(RegisteredPod::uid).containsExactly("u1", "u1");
  }

  @Test
  void unregisteringDeletesTheReferencesOfTheStoredCopy() {
    manager.useStrategy("first", first);
    manager.registerPod(pod("p", "u1", "a", "b"));
    takeLog();
    // the pod given on delete may be a later version: what counts is what was registered
    manager.unregisterPod(pod("p", "u1", "c"));
    assertThat(takeLog()).containsExactly("first delete ns/a u1", "first delete ns/b u1");
    assertThat(first.store(0).references()).isEmpty();
    assertThat(manager.registeredPods()).isEmpty();
    assertThat(manager.objects()).isEmpty();
  }

  @Test
  void unregisteringAnUnknownPodOrTwiceDoesNothing() {
    manager.useStrategy("first", first);
    manager.registerPod(pod("p", "u1", "a"));
    takeLog();
    manager.unregisterPod(pod("other", "u9", "a"));
    manager.unregisterPod(pod("p", "u2", "a"));
    assertThat(takeLog()).isEmpty();
    manager.unregisterPod(pod("p", "u1"));
    manager.unregisterPod(pod("p", "u1"));
    assertThat(takeLog()).containsExactly("first delete ns/a u1");
  }

  @Test
  void theBuiltInGetAnswersWhileNoStrategyIsGiven() {
    assertThat(manager.strategy()).isEqualTo("get");
    assertThat(manager.builtInStrategy()).isTrue();
    long gets = server.requestCount(Verb.GET, "configmaps");
    // like the kubelet's get strategy: a direct GET, registered or not
    assertThat(manager.get("ns", "a").getData()).containsEntry("k", "a");
    assertThat(server.requestCount(Verb.GET, "configmaps")).isEqualTo(gets + 1);
    assertThatThrownBy(() -> manager.get("ns", "missing"))
        .isInstanceOf(ObjectNotFoundException.class).hasMessage("configmaps \"missing\" not found");
  }

  @Test
  void registrationsNeverTouchTheNetwork() {
    manager.registerPod(pod("p", "u1", "a"));
    manager.useStrategy("first", first);
    server.stop();
    manager.registerPod(pod("p", "u1", "b"));
    manager.registerPod(pod("q", "u2", "a"));
    manager.unregisterPod(pod("p", "u1"));
    manager.useBuiltInStrategy();
    assertThat(manager.registeredPods()).extracting(RegisteredPod::name).containsExactly("q");
  }

  @Test
  void aNewStrategyReceivesEveryRegistrationBeforeTheOldStoreCloses() {
    manager.useStrategy("first", first);
    manager.registerPod(pod("p", "u1", "a", "b"));
    manager.registerPod(pod("q", "u2", "b"));
    takeLog();

    manager.useStrategy("second", second);

    assertThat(takeLog()).containsExactly("second create configmaps", "second add ns/a u1", "second add ns/b u1",
        "second add ns/b u2", "first close configmaps");
    assertThat(manager.strategy()).isEqualTo("second");
    assertThat(manager.builtInStrategy()).isFalse();
    assertThat(second.store(0).references()).isEqualTo(first.store(0).references());
    assertThat(manager.get("ns", "b").getData()).containsEntry("k", "b");
    manager.unregisterPod(pod("p", "u1"));
    assertThat(takeLog()).containsExactly("second delete ns/a u1", "second delete ns/b u1");
  }

  @Test
  void aGetThatTheClosedOldStoreFailsIsAnsweredByTheNewStore() throws Exception {
    manager.useStrategy("first", first);
    manager.registerPod(pod("p", "u1", "a"));
    first.holdGets();
    CompletableFuture<ConfigMap> get = CompletableFuture.supplyAsync(() -> manager.get("ns", "a"));
    assertThat(first.awaitHeldGet()).isTrue();

    // the old store closes at once; the held get then fails on it ("closed during a get")
    manager.useStrategy("second", second);
    assertThat(first.store(0).closed()).isTrue();
    assertThat(manager.get("ns", "a").getData()).containsEntry("k", "a");

    first.releaseGets();
    assertThat(get.get(10, TimeUnit.SECONDS).getData()).containsEntry("k", "a");
    assertThat(takeLog()).contains("second add ns/a u1");
  }

  @Test
  void noGetFailsWhileStrategiesChange() throws Exception {
    manager.useStrategy("first", first);
    manager.registerPod(pod("p", "u1", "a", "b"));
    AtomicBoolean running = new AtomicBoolean(true);
    ExecutorService getters = Executors.newFixedThreadPool(4);
    try {
      List<Future<Integer>> results = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        String name = i % 2 == 0 ? "a" : "b";
        results.add(getters.submit(() -> {
          int gets = 0;
          while (running.get()) {
            assertThat(manager.get("ns", name).getData()).containsEntry("k", name);
            gets++;
          }
          return gets;
        }));
      }
      for (int i = 0; i < 30; i++) {
        manager.useStrategy(i % 2 == 0 ? "second" : "first", i % 2 == 0 ? second : first);
        manager.registerPod(pod("q" + i, "u-q" + i, "a"));
      }
      running.set(false);
      for (Future<Integer> result : results) {
        assertThat(result.get(30, TimeUnit.SECONDS)).isPositive();
      }
    } finally {
      getters.shutdownNow();
    }
    assertThat(manager.objects()).extracting(CachedObject::name, CachedObject::references)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("a", 31), org.assertj.core.groups.Tuple.tuple("b", 1));
  }

  @Test
  void movingBackToTheBuiltInGetKeepsRegistrations() {
    manager.useStrategy("first", first);
    manager.registerPod(pod("p", "u1", "a"));
    manager.useBuiltInStrategy();
    assertThat(first.store(0).closed()).isTrue();
    assertThat(manager.strategy()).isEqualTo("get");
    assertThat(manager.builtInStrategy()).isTrue();
    assertThat(manager.get("ns", "c").getData()).containsEntry("k", "c");
    manager.useStrategy("second", second);
    assertThat(second.store(0).references()).isEqualTo(Map.of("ns/a", Map.of("u1", 1)));
  }

  @Test
  void aStrategyThatCannotCreateAStoreLeavesTheManagerAsItWas() {
    manager.useStrategy("first", first);
    manager.registerPod(pod("p", "u1", "a"));
    assertThatThrownBy(() -> manager.useStrategy("broken", new dev.nodelet.objectcache.StoreStrategy() {
      @Override
      public <T extends io.fabric8.kubernetes.api.model.HasMetadata> dev.nodelet.objectcache.ObjectStore<T>
          createStore(dev.nodelet.objectcache.ResourceType<T> type,
          dev.nodelet.objectcache.ObjectStore.Listener<? super T> listener) {
        throw new IllegalStateException("the broken strategy is closed");
      }
    })).isInstanceOf(IllegalStateException.class).hasMessage("the broken strategy is closed");
    assertThat(manager.strategy()).isEqualTo("first");
    assertThat(manager.builtInStrategy()).isFalse();
    assertThat(first.store(0).closed()).isFalse();
    assertThat(manager.get("ns", "a").getData()).containsEntry("k", "a");
  }

  @Test
  void objectsShowReferencesAndLastAccess() {
    manager.useStrategy("first", first);
    Instant registered = clock.instant();
    manager.registerPod(pod("p", "u1", "a", "b"));
    manager.registerPod(pod("q", "u2", "b"));
    clock.advance(Duration.ofSeconds(5));
    manager.get("ns", "b");
    assertThat(manager.objects()).containsExactly(
        new CachedObject("ns", "a", "first", Optional.empty(), 1, Optional.empty()),
        new CachedObject("ns", "b", "first", Optional.empty(), 2, Optional.of(registered.plusSeconds(5))));
  }

  @Test
  void aClosedManagerRefusesGetsAndIgnoresPods() {
    manager.useStrategy("first", first);
    manager.registerPod(pod("p", "u1", "a"));
    manager.close();
    manager.close();
    assertThat(first.store(0).closed()).isTrue();
    assertThatThrownBy(() -> manager.get("ns", "a"))
        .isInstanceOf(IllegalStateException.class).hasMessage("the configmaps manager is closed");
    takeLog();
    manager.registerPod(pod("q", "u2", "a"));
    manager.unregisterPod(pod("p", "u1"));
    manager.useStrategy("second", second);
    assertThat(takeLog()).isEmpty();
  }

  @Test
  void aPodWithoutNamespaceIsRejectedByName() {
    Pod pod = new PodBuilder().withNewMetadata().withName("p").withUid("u").endMetadata().build();
    assertThatThrownBy(() -> manager.registerPod(pod))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a pod needs metadata.namespace and metadata.name, got /p");
    assertThat(manager.registeredPods()).isEmpty();
  }
}
