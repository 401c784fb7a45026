package dev.nodelet.store.ttl.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.configuration.RecordingPublisher;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.testing.FixedNodeIdentity;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.osgi.util.converter.Converters;

/**
 * Configuration of the TTL strategy component: an invalid value is refused with the key named and the last good
 * configuration stays; a valid one builds a new strategy that managers move to, while their old store keeps its
 * settings until then.
 */
class TtlStrategyComponentTest {

  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension();
  private TtlStrategyComponent component;
  private final RecordingPublisher registry = new RecordingPublisher();

  private final NodeIdentity node = FixedNodeIdentity.named("node-1");

  @BeforeEach
  void start() {
    api.client().nodes().resource(new NodeBuilder().withNewMetadata().withName("node-1").endMetadata().build())
        .create();
    api.createConfigMap("ns", "a", Map.of("k", "1"));
    component = new TtlStrategyComponent(registry, api.client(), node, config(Map.of("default.ttl.seconds", 3600)),
        Map.of("default.ttl.seconds", 3600));
  }

  @AfterEach
  void stop() {
    component.deactivate();
  }

  private static TtlStrategyConfiguration config(Map<String, Object> properties) {
    return Converters.standardConverter().convert(properties).to(TtlStrategyConfiguration.class);
  }

  private long fetches() {
    return api.server().requestCount(Verb.GET, "configmaps");
  }

  /** Whether a second get right after a first one fetches again (TTL 0) or answers from the cache. */
  private boolean refetches(ObjectStore<ConfigMap> store) {
    store.get("ns", "a");
    long before = fetches();
    store.get("ns", "a");
    return fetches() > before;
  }

  @Test
  void anInvalidFirstConfigurationRegistersNoStrategyAndHoldsReadinessUntilAValidOne() {
    RecordingPublisher waitingRegistry = new RecordingPublisher();
    Map.of("soon", "default.ttl.seconds: not a whole number of seconds",
            400L * 24 * 3600, "default.ttl.seconds: must be between 0 and 31536000 seconds, was 34560000")
        .forEach((value, error) -> {
          TtlStrategyComponent waiting = new TtlStrategyComponent(waitingRegistry, api.client(), node,
              config(Map.of("default.ttl.seconds", value)), Map.of());
          assertThat(waitingRegistry.health()).startsWith("CRITICAL the TTL store strategy waits for a valid"
              + " configuration dev.nodelet.store.ttl: " + error);
          assertThat(waitingRegistry.services(StoreStrategy.class)).isEmpty();
          assertThatThrownBy(() -> waiting.createStore(ResourceType.CONFIG_MAPS))
              .isInstanceOf(IllegalStateException.class);

          waiting.modified(config(Map.of("default.ttl.seconds", 60)), Map.of("default.ttl.seconds", 60));
          assertThat(waitingRegistry.healthCheck()).isEmpty();
          assertThat(waitingRegistry.services(StoreStrategy.class)).containsExactly(waiting);
          assertThat(waitingRegistry.registered.get(waiting)).containsEntry(StoreStrategy.PROPERTY, "ttl");
          ObjectStore<ConfigMap> store = waiting.createStore(ResourceType.CONFIG_MAPS);
          store.addReference("ns", "a", "pod-1");
          assertThat(store.get("ns", "a").getData()).containsEntry("k", "1");
          store.close();
          waiting.deactivate();
          assertThat(waitingRegistry.registered).isEmpty();
        });
  }

  @Test
  void anInvalidChangeIsRefusedAndTheLastGoodConfigurationStays() {
    ObjectStore<ConfigMap> store = component.createStore(ResourceType.CONFIG_MAPS);
    store.addReference("ns", "a", "pod-1");
    TtlSettings good = component.settings();

    component.modified(config(Map.of("default.ttl.seconds", -5)), Map.of());
    component.modified(config(Map.of("default.ttl.seconds", "a minute")), Map.of());
    component.modified(config(Map.of("default.ttl.seconds", Long.MAX_VALUE)), Map.of());

    assertThat(component.settings()).isEqualTo(good);
    assertThat(refetches(store)).as("the 3600 s TTL still holds").isFalse();
    // a store made now is of the same strategy
    ObjectStore<ConfigMap> later = component.createStore(ResourceType.CONFIG_MAPS);
    later.addReference("ns", "a", "pod-1");
    assertThat(refetches(later)).isFalse();
    later.close();
    store.close();
    // the node's annotation comes from NodeIdentity: no watch of the component's own
    assertThat(api.server().openWatches("nodes")).isZero();
  }

  @Test
  void aValidChangeMovesAManagerToAFreshStoreAndTheOldStoreKeepsItsTtlUntilThen() {
    try (SwitchableObjectManager<ConfigMap> manager = ObjectManagers.configMaps(api.client()).build()) {
      manager.useStrategy("ttl", component); // as the managers' components do when the service binds
      manager.registerPod(new PodBuilder().withNewMetadata().withNamespace("ns").withName("p").withUid("u")
          .endMetadata().withNewSpec().addNewVolume().withName("v").withNewConfigMap().withName("a").endConfigMap()
          .endVolume().endSpec().build());
      manager.get("ns", "a");
      long before = fetches();
      manager.get("ns", "a");
      assertThat(fetches()).isEqualTo(before);

      // what SCR does on a new configuration: the modified method, then the service's new properties, on which the
      // managers' components move to a fresh store
      component.modified(config(Map.of("default.ttl.seconds", 0, "use.node.ttl.annotation", false)),
          Map.of("default.ttl.seconds", 0, "use.node.ttl.annotation", false));
      assertThat(registry.registered.get(component)).as("the managers see the new properties")
          .containsEntry("default.ttl.seconds", 0).containsEntry(StoreStrategy.PROPERTY, "ttl");
      before = fetches();
      manager.get("ns", "a");
      assertThat(fetches()).as("the manager's store still has the old TTL").isEqualTo(before);
      manager.useStrategy("ttl", component);

      assertThat(component.settings()).isEqualTo(new TtlSettings(0, false, Optional.empty()));
      before = fetches();
      manager.get("ns", "a");
      manager.get("ns", "a");
      assertThat(fetches()).as("TTL 0 fetches on every get").isEqualTo(before + 2);
      assertThat(api.server().openWatches("nodes")).isZero();
    }
  }

  /** The component's stores pass the last access through, so that nodelet:objects shows when a get last asked. */
  @Test
  void aStoreTellsItsLastAccess() {
    ObjectStore<ConfigMap> store = component.createStore(ResourceType.CONFIG_MAPS);
    store.addReference("ns", "a", "pod-1");
    assertThat(store.lastAccess("ns", "a")).isEmpty();
    Instant before = Instant.now();
    store.get("ns", "a");
    assertThat(store.lastAccess("ns", "a")).hasValueSatisfying(at -> assertThat(at).isAfterOrEqualTo(before));
    store.close();
  }
}
