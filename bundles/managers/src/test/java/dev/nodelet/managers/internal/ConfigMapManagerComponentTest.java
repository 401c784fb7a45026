package dev.nodelet.managers.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.awaitility.Awaitility.await;

import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.RegisteredPod;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchEvent;
import dev.nodelet.objectcache.WatchOptions;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.store.ttl.TtlStoreStrategy;
import dev.nodelet.store.watch.WatchStoreStrategy;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ConfigMapManagerComponentTest {

  private static final String SELECTOR = "metadata.name=settings";

  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension();
  private WatchStoreStrategy watch;
  private TtlStoreStrategy ttl;
  private ConfigMapManagerComponent component;

  @BeforeEach
  void start() {
    watch = WatchStoreStrategy.builder(api.client()).build();
    ttl = TtlStoreStrategy.builder(api.client()).build();
    api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName("settings")
        .endMetadata().addToData("mode", "fast").build()).create();
    ManagerConfiguration config = Defaults.configuration();
    component = new ConfigMapManagerComponent(api.client(), new ManagerMetricsService(), config);
  }

  @AfterEach
  void stop() {
    component.deactivate();
    watch.close();
    ttl.close();
  }

  /** A pod that reads the ConfigMap "settings" through envFrom. */
  private static Pod pod(String name, String uid) {
    return new PodBuilder().withNewMetadata().withNamespace("ns").withName(name).withUid(uid).endMetadata()
        .withNewSpec().addNewContainer().withName("c").addNewEnvFrom().withNewConfigMapRef().withName("settings")
        .endConfigMapRef().endEnvFrom().endContainer().endSpec().build();
  }

  @Test
  void theDefaultTargetIsTheWatchStrategy() {
    ManagerConfiguration config = Defaults.configuration();
    assertThat(config.strategy_target()).isEqualTo("(nodelet.strategy=watch)");
  }

  @Test
  void theBuiltInGetAnswersUntilAStrategyIsBound() {
    assertThat(component.builtInStrategy()).isTrue();
    assertThat(component.strategy()).isEqualTo("get");
    long gets = api.server().requestCount(Verb.GET, "configmaps");
    assertThat(component.getConfigMap("ns", "settings").getData()).containsEntry("mode", "fast");
    assertThat(api.server().requestCount(Verb.GET, "configmaps")).isEqualTo(gets + 1);
  }

  @Test
  void registrationsSurviveEveryStrategyChange() {
    component.registerPod(pod("p", "u1"));
    component.addStrategy(watch, Defaults.strategy("watch", 1));
    assertThat(component.getConfigMap("ns", "settings").getData()).containsEntry("mode", "fast");
    await().atMost(Duration.ofSeconds(30)).until(() -> api.server().openWatches("configmaps", SELECTOR) == 1);
    assertThatThrownBy(() -> component.getConfigMap("ns", "other"))
        .isInstanceOf(NotRegisteredException.class).hasMessage("object \"ns\"/\"other\" not registered");

    // a new strategy.target: SCR binds the new match, then unbinds the old one
    component.addStrategy(ttl, Defaults.strategy("ttl", 2));
    component.removeStrategy(watch, Defaults.strategy("watch", 1));
    assertThat(component.strategy()).isEqualTo("ttl");
    await().atMost(Duration.ofSeconds(30)).until(() -> api.server().openWatches("configmaps", SELECTOR) == 0);
    assertThat(component.getConfigMap("ns", "settings").getData()).containsEntry("mode", "fast");

    component.removeStrategy(ttl, Defaults.strategy("ttl", 2));
    assertThat(component.builtInStrategy()).isTrue();
    assertThat(component.strategy()).isEqualTo("get");
    component.addStrategy(watch, Defaults.strategy("watch", 3));
    assertThat(component.getConfigMap("ns", "settings").getData()).containsEntry("mode", "fast");
    assertThat(component.registeredPods()).containsExactly(new RegisteredPod("ns", "p", "u1", List.of("settings")));
  }

  @Test
  void noGetFailsWhileTheStrategyChanges() throws Exception {
    component.registerPod(pod("p", "u1"));
    component.addStrategy(watch, Defaults.strategy("watch", 1));
    AtomicBoolean running = new AtomicBoolean(true);
    CountDownLatch started = new CountDownLatch(2);
    ExecutorService getters = Executors.newFixedThreadPool(2);
    try {
      List<Future<Integer>> results = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        results.add(getters.submit(() -> {
          int gets = 0;
          while (running.get()) {
            assertThat(component.getConfigMap("ns", "settings").getData()).containsEntry("mode", "fast");
            gets++;
            started.countDown();
          }
          return gets;
        }));
      }
      // the swaps below must overlap the gets: on a loaded machine they could otherwise be over before one started
      assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
      for (int i = 0; i < 5; i++) {
        component.addStrategy(ttl, Defaults.strategy("ttl", 10 + i));
        component.removeStrategy(watch, Defaults.strategy("watch", 1));
        component.addStrategy(watch, Defaults.strategy("watch", 1));
        component.removeStrategy(ttl, Defaults.strategy("ttl", 10 + i));
      }
      running.set(false);
      for (Future<Integer> result : results) {
        assertThat(result.get(30, TimeUnit.SECONDS)).isPositive();
      }
    } finally {
      getters.shutdownNow();
    }
    assertThat(component.strategy()).isEqualTo("watch");
  }

  @Test
  void registeringNeverWaitsForTheApiServer() {
    component.addStrategy(watch, Defaults.strategy("watch", 1));
    // no answer can arrive during the test: the calls can only return if they do not wait for one
    api.server().delayResponses(Duration.ofHours(1));
    assertTimeoutPreemptively(Duration.ofMinutes(1), () -> {
      component.registerPod(pod("p", "u1"));
      component.registerPod(pod("q", "u2"));
      component.unregisterPod(pod("p", "u1"));
    });
    // the store did ask: the calls returned while its request was unanswered
    await().atMost(Duration.ofSeconds(30)).until(() -> api.server().requestCount(Verb.LIST, "configmaps")
        + api.server().requestCount(Verb.WATCH, "configmaps") > 0);
    api.server().delayResponses(Duration.ZERO);
  }

  @Test
  void deactivationStopsEveryWatch() throws InterruptedException {
    component.addStrategy(watch, Defaults.strategy("watch", 1));
    component.registerPod(pod("p", "u1"));
    component.getConfigMap("ns", "settings");
    Watch<ConfigMap> events = component.watch(WatchOptions.<ConfigMap>builder().build());
    component.deactivate();
    await().atMost(Duration.ofSeconds(30)).until(() -> api.server().openWatches("configmaps", SELECTOR) == 0);
    assertThatThrownBy(() -> component.getConfigMap("ns", "settings"))
        .isInstanceOf(IllegalStateException.class).hasMessage("the configmaps manager is closed");
    // the store may report the object it synced after the watch opened: that ADDED is from before the deactivation
    WatchEvent<ConfigMap> left = events.poll(Duration.ZERO);
    if (left != null) {
      assertThat(left.type()).isEqualTo(WatchEvent.Type.ADDED);
      assertThat(left.object().getMetadata().getName()).isEqualTo("settings");
      assertThat(events.poll(Duration.ZERO)).as("nothing after the ADDED of the synced object").isNull();
    }
    assertThat(events.isEnded()).isTrue();
    await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet())
        .extracting(Thread::getName)
        .noneMatch(name -> name.startsWith("nodelet-watch-") && name.endsWith("-configmaps")));
  }

  /** The next event as "TYPE name@resourceVersion of the object", or null if none comes in time. */
  private static String next(Watch<ConfigMap> events) throws InterruptedException {
    WatchEvent<ConfigMap> event = events.poll(Duration.ofSeconds(10));
    return event == null ? null : event.type() + " " + event.object().getMetadata().getName() + "@"
        + event.object().getMetadata().getResourceVersion();
  }

  private String update(String mode) {
    return api.client().configMaps().inNamespace("ns").withName("settings")
        .edit(c -> new ConfigMapBuilder(c).addToData("mode", mode).build()).getMetadata().getResourceVersion();
  }

  @Test
  void withTheWatchStrategyAWatchSeesEveryChangeOfAReferencedObject() throws InterruptedException {
    component.addStrategy(watch, Defaults.strategy("watch", 1));
    try (Watch<ConfigMap> events = component.watch(WatchOptions.<ConfigMap>builder().build())) {
      String created = api.client().configMaps().inNamespace("ns").withName("settings").get().getMetadata()
          .getResourceVersion();
      component.registerPod(pod("p", "u1"));
      assertThat(next(events)).isEqualTo("ADDED settings@" + created);
      String updated = update("slow");
      assertThat(next(events)).isEqualTo("MODIFIED settings@" + updated);
      api.client().configMaps().inNamespace("ns").withName("settings").delete();
      assertThat(next(events)).startsWith("DELETED settings@");
      assertThat(events.isEnded()).isFalse();
    }
  }

  @Test
  void withTheTtlStrategyAWatchSeesWhatFetchesFind() throws InterruptedException {
    try (TtlStoreStrategy everyGet = TtlStoreStrategy.builder(api.client()).defaultTtl(Duration.ZERO).build();
        Watch<ConfigMap> events = component.watch(WatchOptions.<ConfigMap>builder().build())) {
      component.addStrategy(everyGet, Defaults.strategy("ttl", 1));
      component.registerPod(pod("p", "u1"));
      assertThat(events.poll(Duration.ofMillis(200))).as("nothing fetched yet").isNull();
      String created = component.getConfigMap("ns", "settings").getMetadata().getResourceVersion();
      assertThat(next(events)).isEqualTo("ADDED settings@" + created);
      String updated = update("slow");
      component.getConfigMap("ns", "settings");
      assertThat(next(events)).isEqualTo("MODIFIED settings@" + updated);
    }
  }

  @Test
  void aWatchSurvivesStrategySwaps() throws InterruptedException {
    component.addStrategy(watch, Defaults.strategy("watch", 1));
    try (TtlStoreStrategy everyGet = TtlStoreStrategy.builder(api.client()).defaultTtl(Duration.ZERO).build();
        Watch<ConfigMap> events = component.watch(WatchOptions.<ConfigMap>builder().build())) {
      component.registerPod(pod("p", "u1"));
      assertThat(next(events)).startsWith("ADDED settings@");

      component.addStrategy(everyGet, Defaults.strategy("ttl", 2));
      component.removeStrategy(watch, Defaults.strategy("watch", 1));
      String fetched = update("slow");
      component.getConfigMap("ns", "settings");
      assertThat(next(events)).isEqualTo("MODIFIED settings@" + fetched);

      component.addStrategy(watch, Defaults.strategy("watch", 3));
      component.removeStrategy(everyGet, Defaults.strategy("ttl", 2));
      await().atMost(Duration.ofSeconds(30)).until(() -> api.server().openWatches("configmaps", SELECTOR) == 1);
      String watched = update("fast");
      assertThat(next(events)).isEqualTo("MODIFIED settings@" + watched);
      assertThat(component.watchStatistics().watchers()).isEqualTo(1);
    }
  }
}
