package dev.nodelet.store.watch.internal;

import static dev.nodelet.store.watch.internal.WatchComponentExtension.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.configuration.RecordingPublisher;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.store.watch.WatchStoreStrategy;
import dev.nodelet.testing.process.Descriptors;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class WatchStrategyComponentTest {

  @RegisterExtension
  final WatchComponentExtension ds = new WatchComponentExtension();
  private final ApiServerExtension api = ds.api();

  private static boolean sweepThreadAlive() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals("nodelet-store-watch-sweep") && t.isAlive());
  }

  @Test
  void deactivationStopsEveryWatchAndTheTimer() {
    api.client().secrets().inNamespace("ns").resource(new SecretBuilder().withNewMetadata()
        .withName("s").endMetadata().addToData("password", "aHVudGVyMg==").build()).create();
    api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName("c")
        .endMetadata().build()).create();
    WatchStrategyComponent component = ds.activate(Map.of());
    ObjectStore<Secret> secrets = component.createStore(ResourceType.SECRETS);
    secrets.addReference("ns", "s", "pod-1");
    component.createStore(ResourceType.CONFIG_MAPS).addReference("ns", "c", "pod-1");
    assertThat(secrets.get("ns", "s").getData()).containsKey("password");
    await().atMost(Duration.ofSeconds(30)).until(() -> api.server().openWatches("secrets") == 1
        && api.server().openWatches("configmaps") == 1);
    assertThat(sweepThreadAlive()).isTrue();

    component.deactivate();
    await().atMost(Duration.ofSeconds(30)).until(() -> api.server().openWatches("secrets") == 0
        && api.server().openWatches("configmaps") == 0 && !sweepThreadAlive());
    assertThatThrownBy(() -> component.createStore(ResourceType.SECRETS))
        .isInstanceOf(IllegalStateException.class).hasMessage("the watch strategy is closed");
  }

  /**
   * A strategy stopped while its lists and watches are still in flight. The JDK client completes a response on its
   * executor; were that executor shut down by the stop, the answer would never reach the store, which would never
   * close the watch, its connection, its client and the client's selector thread.
   */
  @Test
  void deactivationWhileListsAndWatchesAreInFlightLeavesNoWatchConnectionOrThread() throws Exception {
    for (String name : List.of("a", "b")) {
      api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
          .endMetadata().build()).create();
    }
    long socketsBefore = Descriptors.sockets();
    long selectorsBefore = threads("HttpClient-").count();
    for (int i = 0; i < 100; i++) {
      WatchStrategyComponent component = ds.activate(Map.of());
      ObjectStore<ConfigMap> store = component.createStore(ResourceType.CONFIG_MAPS);
      store.addReference("ns", "a", "pod-1");
      store.addReference("ns", "b", "pod-1");
      Thread.sleep(i % 40); // stops before, during and after the lists and the watches
      component.deactivate();
    }
    await().atMost(Duration.ofSeconds(30)).until(() -> api.server().openWatches("configmaps") == 0);
    await().atMost(Duration.ofSeconds(30)).until(() -> threads("nodelet-store-watch-").count() == 0);
    // idle connections close, and the selector threads end, with the garbage collector
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
      System.gc();
      return Descriptors.sockets() <= socketsBefore && threads("HttpClient-").count() <= selectorsBefore;
    });
  }

  private static Stream<String> threads(String prefix) {
    return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
        .filter(n -> n.startsWith(prefix));
  }


  @Test
  void anInvalidFirstConfigurationRegistersNoStrategyAndHoldsReadinessUntilAValidOne() {
    api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName("c")
        .endMetadata().addToData("k", "v").build()).create();
    RecordingPublisher registry = new RecordingPublisher();
    WatchStrategyComponent component = ds.activate(registry, Map.of("sync.wait.millis", 0));
    try {
      assertThat(registry.health()).isEqualTo("CRITICAL the watch store strategy waits for a valid configuration"
          + " dev.nodelet.store.watch: sync.wait.millis: must be between 1 and 600000 milliseconds, was 0; correct"
          + " it (etc/dev.nodelet.store.watch.cfg)");
      assertThat(registry.services(StoreStrategy.class)).isEmpty();
      assertThat(sweepThreadAlive()).as("no strategy, no timer").isFalse();

      component.modified(config(Map.of("sync.wait.millis", 5000)), Map.of("sync.wait.millis", 5000));
      assertThat(registry.healthCheck()).isEmpty();
      assertThat(registry.services(StoreStrategy.class)).containsExactly(component);
      assertThat(registry.registered.get(component)).containsEntry(StoreStrategy.PROPERTY, "watch")
          .containsEntry("sync.wait.millis", 5000);
      ObjectStore<ConfigMap> store = component.createStore(ResourceType.CONFIG_MAPS);
      store.addReference("ns", "c", "pod-1");
      assertThat(store.get("ns", "c").getData()).containsEntry("k", "v");
    } finally {
      component.deactivate();
    }
    assertThat(registry.registered).isEmpty();
  }

  @Test
  void aBadValueIsNamed() {
    assertThat(ds.waits(Map.of("resync.interval.seconds", 0)))
        .contains("resync.interval.seconds: must be between 1 and 86400 seconds, was 0");
  }

  @Test
  void maxIdleTimeIsFiveResyncIntervalsAndAtLeastAMinute() {
    assertThat(WatchStoreStrategy.builder(api.client()).maxIdleTime()).isEqualTo(Duration.ofMinutes(5));
    assertThat(WatchStoreStrategy.builder(api.client()).resyncInterval(Duration.ofSeconds(90)).maxIdleTime())
        .isEqualTo(Duration.ofSeconds(450));
    assertThat(WatchStoreStrategy.builder(api.client()).resyncInterval(Duration.ofSeconds(10)).maxIdleTime())
        .isEqualTo(Duration.ofMinutes(1));
  }

  /** The component's stores pass the last access through (to the second), so that nodelet:objects shows it. */
  @Test
  void aStoreTellsItsLastAccess() {
    api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName("c")
        .endMetadata().build()).create();
    WatchStrategyComponent component = ds.activate(Map.of());
    try {
      ObjectStore<ConfigMap> store = component.createStore(ResourceType.CONFIG_MAPS);
      assertThat(store.lastAccess("ns", "c")).isEmpty();
      store.addReference("ns", "c", "pod-1");
      Instant before = Instant.now().truncatedTo(ChronoUnit.SECONDS);
      store.get("ns", "c");
      assertThat(store.lastAccess("ns", "c")).hasValueSatisfying(at -> assertThat(at).isAfterOrEqualTo(before));
    } finally {
      component.deactivate();
    }
  }
}
