package dev.nodelet.store.watch.internal;

import static dev.nodelet.store.watch.internal.WatchComponentExtension.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.objectcache.CacheSyncException;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Configuration of the watch strategy component, with a ConfigMap manager that takes a fresh store of it whenever
 * its service properties change, as the managers' components do: an invalid change is refused with the key named
 * and nothing moves; a valid one is taken by the manager through a fresh store and the old strategy stops its
 * watches with its last store.
 */
class WatchStrategyReconfigurationTest {

  private static final Duration WAIT = Duration.ofSeconds(30);

  @RegisterExtension
  final WatchComponentExtension ds = new WatchComponentExtension();
  private final ApiServerExtension api = ds.api();
  private WatchStrategyComponent watch;
  private SwitchableObjectManager<ConfigMap> manager;

  @BeforeEach
  void start() {
    api.createConfigMap("ns", "a", Map.of("k", "1"));
    watch = ds.activate(Map.of());
    manager = ObjectManagers.configMaps(api.client()).build();
    manager.useStrategy("watch", watch); // as the managers' components do when the service binds
    manager.registerPod(new PodBuilder().withNewMetadata().withNamespace("ns").withName("p").withUid("u")
        .endMetadata().withNewSpec().addNewVolume().withName("v").withNewConfigMap().withName("a").endConfigMap()
        .endVolume().endSpec().build());
    // a cold JVM may take longer than the sync wait for its first list
    await().atMost(WAIT).ignoreExceptions().until(() -> manager.get("ns", "a") != null);
  }

  @AfterEach
  void stop() {
    manager.close();
    watch.deactivate();
  }

  @Test
  void anInvalidFirstValueWaitsNamingTheKey() {
    assertThat(ds.waits(Map.of("sync.wait.millis", 3_600_000)))
        .contains("sync.wait.millis: must be between 1 and 600000 milliseconds, was 3600000");
    assertThat(ds.waits(Map.of("resync.interval.seconds", "often")))
        .contains("resync.interval.seconds: not a whole number of seconds");
    assertThat(ds.waits(Map.of("sync.wait.millis", 0)))
        .contains("sync.wait.millis: must be between 1 and 600000 milliseconds, was 0");
  }

  @Test
  void anInvalidWatchBudgetWaitsOrIsRefusedNamingTheKey() {
    assertThat(ds.waits(Map.of("max.watches", -1)))
        .contains("max.watches: must be between 0 and 1000000 watches, was -1");
    assertThat(ds.waits(Map.of("max.watches", "many"))).contains("max.watches: not a whole number of watches");
    assertThat(ds.waits(Map.of("polled.ttl.seconds", -5)))
        .contains("polled.ttl.seconds: must be between 0 and 31536000 seconds, was -5");

    WatchStrategyRuntime first = watch.strategy();
    watch.modified(config(Map.of("max.watches", 1)), Map.of());
    for (Map<String, Object> bad : java.util.List.<Map<String, Object>>of(Map.of("max.watches", -1),
        Map.of("max.watches", 1_000_001), Map.of("max.watches", "all"))) {
      watch.modified(config(bad), Map.of());
      assertThat(watch.settings().maxWatches()).as("the last good budget").isEqualTo(1);
      assertThat(first.maxWatches()).isEqualTo(1);
    }
    assertThat(watch.strategy()).isSameAs(first);
  }

  @Test
  void aChangedWatchBudgetAppliesToTheStoresInForce() {
    assertThat(manager.get("ns", "a").getData()).containsEntry("k", "1");
    api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName("b")
        .endMetadata().addToData("k", "1").build()).create();
    manager.registerPod(new PodBuilder().withNewMetadata().withNamespace("ns").withName("q").withUid("u2")
        .endMetadata().withNewSpec().addNewVolume().withName("v").withNewConfigMap().withName("b").endConfigMap()
        .endVolume().endSpec().build());
    await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 2);
    WatchStrategyRuntime first = watch.strategy();

    watch.modified(config(Map.of("max.watches", 1)), Map.of());
    assertThat(watch.strategy()).as("no new strategy: the budget holds across the change").isSameAs(first);
    assertThat(watch.settings().maxWatches()).isEqualTo(1);
    await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 1);
    // SCR publishes the new properties and the manager takes a fresh store of the same strategy, within its budget
    manager.useStrategy("watch", watch);
    await().atMost(WAIT).until(() -> first.openStores() == 1);
    // the fresh store starts both objects polled while the old store's watch ends, and gives the slot to one of them
    // once that watch's close grace has passed: waited for as a state, since until then the receipts show both
    // polled and the server may still count the old watch (the receipts and nodelet:objects show which is polled)
    await().atMost(WAIT).until(() -> polledObjects() == 1);
    await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 1);
    assertThat(manager.get("ns", "a").getData()).containsEntry("k", "1");
    assertThat(manager.get("ns", "b").getData()).containsEntry("k", "1");
    assertThat(polledObjects()).as("a get of a polled object read once does not move it").isEqualTo(1);

    watch.modified(config(Map.of()), Map.of());
    assertThat(watch.strategy()).isSameAs(first);
    assertThat(first.maxWatches()).isZero();
    await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 2);
    manager.useStrategy("watch", watch);
    await().atMost(WAIT).until(() -> first.openStores() == 1);
    await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 2);
  }

  /** Objects the manager's receipts show as polled. */
  private long polledObjects() {
    return manager.receipts().stream().flatMap(pod -> pod.objects().stream())
        .filter(o -> o.state().equals(java.util.Optional.of(dev.nodelet.objectcache.ObjectState.POLLED))).count();
  }

  @Test
  void invalidChangesAreRefusedAndNothingMoves() {
    assertThat(manager.get("ns", "a").getData()).containsEntry("k", "1");
    await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 1);
    WatchStrategyComponent.Settings good = watch.settings();
    WatchStrategyRuntime first = watch.strategy();

    for (Map<String, Object> bad : java.util.List.<Map<String, Object>>of(
        Map.of("resync.interval.seconds", -1), Map.of("resync.interval.seconds", 0),
        Map.of("sync.wait.millis", 0), Map.of("sync.wait.millis", -250), Map.of("sync.wait.millis", "soon"),
        Map.of("resync.interval.seconds", Long.MAX_VALUE))) {
      watch.modified(config(bad), Map.of());
      // SCR then publishes the refused values as service properties, and the manager takes a fresh store of the
      // same strategy: a new watch, the same settings, no registration lost
      manager.useStrategy("watch", watch);
      assertThat(watch.settings()).isEqualTo(good);
      assertThat(watch.strategy()).isSameAs(first);
      assertThat(manager.get("ns", "a").getData()).containsEntry("k", "1");
    }
    await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 1);
  }

  @Test
  void aValidChangeIsTakenThroughAFreshStoreAndTheOldStrategyStops() {
    assertThat(manager.get("ns", "a").getData()).containsEntry("k", "1");
    await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 1);

    WatchStrategyRuntime old = watch.strategy();
    Map<String, Object> next = Map.of("sync.wait.millis", 1, "resync.interval.seconds", 120);
    watch.modified(config(next), Map.of());
    assertThat(watch.settings()).isEqualTo(new WatchStrategyComponent.Settings(120, 1, java.util.Optional.empty()));
    assertThat(old.isClosed()).as("the old one still feeds the manager's store").isFalse();
    assertThat(old.openStores()).isEqualTo(1);
    manager.useStrategy("watch", watch);
    await().atMost(WAIT).until(old::isClosed);
    assertThat(watch.strategy().openStores()).isEqualTo(1);
    await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 1);
    await().atMost(WAIT).untilAsserted(() -> assertThat(manager.get("ns", "a").getData()).containsEntry("k", "1"));

    // the new store answers: an object whose sync cannot succeed fails the get with the sync error (every list and
    // watch of the test fails from here, so no other store's request can take the injected failure away)
    api.server().failNext(dev.nodelet.testing.apiserver.Verb.LIST, "configmaps", 1000, 500);
    api.server().failNext(dev.nodelet.testing.apiserver.Verb.WATCH, "configmaps", 1000, 500);
    manager.registerPod(new PodBuilder().withNewMetadata().withNamespace("ns").withName("q").withUid("u2")
        .endMetadata().withNewSpec().addNewVolume().withName("v").withNewConfigMap().withName("missing")
        .endConfigMap().endVolume().endSpec().build());
    assertThatThrownBy(() -> manager.get("ns", "missing")).isInstanceOf(CacheSyncException.class);
    api.server().clearFailures();
  }
}
