package dev.nodelet.store.ttl.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.configuration.RecordingPublisher;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.testing.FixedNodeIdentity;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.objectcache.testing.LogCapture;
import dev.nodelet.objectcache.testing.MutableClock;
import dev.nodelet.store.ttl.TtlStoreStrategy;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.osgi.util.converter.Converters;

/** The time-to-live in effect: the node's annotation when it parses, else the default; and the component. */
class TtlStrategyTest {

  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines

  private final MutableClock clock = new MutableClock();
  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension().withConfigMap("ns", "a", Map.of("k", "1"));

  private void annotateNode(String value) {
    NodeBuilder node = new NodeBuilder().withNewMetadata().withName("node-1").endMetadata();
    if (value != null) {
      node.editMetadata().addToAnnotations(TtlStoreStrategy.TTL_ANNOTATION, value).endMetadata();
    }
    api.client().nodes().resource(node.build()).createOr(e -> e.update());
  }

  private long fetches() {
    return api.server().requestCount(Verb.GET, "configmaps");
  }

  /** True if a get a moment (just under {@code age}) after a fetch answers from the cache. */
  private boolean freshFor(ObjectStore<ConfigMap> store, Duration age) {
    store.get("ns", "a");
    clock.advance(Duration.ofMinutes(10));
    store.get("ns", "a");
    clock.advance(age.minusMillis(1));
    long before = fetches();
    store.get("ns", "a");
    return fetches() == before;
  }

  /** True if a copy stays fresh for exactly {@link TtlStoreStrategy#MAX_TTL}. */
  private boolean freshForAYear(ObjectStore<ConfigMap> store) {
    clock.advance(TtlStoreStrategy.MAX_TTL.plusDays(1));
    store.get("ns", "a");
    clock.advance(TtlStoreStrategy.MAX_TTL.minusMillis(1));
    long before = fetches();
    store.get("ns", "a");
    boolean fresh = fetches() == before;
    clock.advance(Duration.ofMillis(1));
    store.get("ns", "a");
    return fresh && fetches() == before + 1;
  }

  @Test
  void theNodeAnnotationSetsTheTtl() {
    annotateNode("0");
    try (TtlStoreStrategy strategy = TtlStoreStrategy.builder(api.client()).clock(clock).nodeName("node-1").build()) {
      ObjectStore<ConfigMap> store = strategy.createStore(ResourceType.CONFIG_MAPS);
      store.addReference("ns", "a", "pod-1");
      // "0": every get fetches, even without the clock moving
      await().atMost(WAIT).untilAsserted(() -> {
        long before = fetches();
        store.get("ns", "a");
        assertThat(fetches()).isEqualTo(before + 1);
      });

      annotateNode("30");
      await().atMost(WAIT).until(() -> freshFor(store, Duration.ofSeconds(30)));
      assertThat(freshFor(store, Duration.ofSeconds(31))).isFalse();

      annotateNode("not a number");
      await().atMost(WAIT).until(() -> freshFor(store, Duration.ofSeconds(60)));
      assertThat(freshFor(store, Duration.ofSeconds(61))).isFalse();

      annotateNode("45");
      await().atMost(WAIT).until(() -> freshFor(store, Duration.ofSeconds(45)) && !freshFor(store,
          Duration.ofSeconds(46)));
      annotateNode(null);
      await().atMost(WAIT).until(() -> freshFor(store, Duration.ofSeconds(60)));
      assertThat(freshFor(store, Duration.ofSeconds(61))).isFalse();
    }
    await().atMost(WAIT).until(() -> api.server().openWatches("nodes") == 0);
  }

  @Test
  void withoutANodeNameTheDefaultHolds() {
    annotateNode("0");
    try (TtlStoreStrategy strategy = TtlStoreStrategy.builder(api.client()).clock(clock)
        .defaultTtl(Duration.ofSeconds(20)).build()) {
      ObjectStore<ConfigMap> store = strategy.createStore(ResourceType.CONFIG_MAPS);
      store.addReference("ns", "a", "pod-1");
      assertThat(freshFor(store, Duration.ofSeconds(20))).isTrue();
      assertThat(freshFor(store, Duration.ofSeconds(21))).isFalse();
      assertThat(api.server().openWatches("nodes")).isZero();
    }
  }

  /**
   * The component reads the annotation from the NodeIdentity service and keeps no watch of its own: one stopped
   * within milliseconds of its start can leave its connection open in the shared client (fabric8 7.5.2).
   */
  @Test
  void theComponentTakesTheTtlFromNodeIdentityAndWatchesNothing() {
    Map<String, String> annotations = new ConcurrentHashMap<>(Map.of(TtlStoreStrategy.TTL_ANNOTATION, "0"));
    NodeIdentity node = FixedNodeIdentity.named("node-1").withAnnotations(annotations);
    // the component runs on the system clock: an hour is fresh, 0 never is
    TtlStrategyComponent component = new TtlStrategyComponent(new RecordingPublisher(), api.client(), node,
        Converters.standardConverter()
        .convert(Map.of("default.ttl.seconds", 3600)).to(TtlStrategyConfiguration.class), Map.of());
    try {
      ObjectStore<ConfigMap> store = component.createStore(ResourceType.CONFIG_MAPS);
      store.addReference("ns", "a", "pod-1");
      long before = fetches();
      store.get("ns", "a");
      store.get("ns", "a");
      assertThat(fetches()).isEqualTo(before + 2);

      annotations.remove(TtlStoreStrategy.TTL_ANNOTATION);
      store.get("ns", "a");
      before = fetches();
      store.get("ns", "a");
      assertThat(fetches()).isEqualTo(before);

      annotations.put(TtlStoreStrategy.TTL_ANNOTATION, "0");
      before = fetches();
      store.get("ns", "a");
      assertThat(fetches()).isEqualTo(before + 1);
      assertThat(api.server().openWatches("nodes")).isZero();
    } finally {
      component.deactivate();
    }
  }

  /** About 3.2e16 seconds overflows the clock arithmetic: the annotation is capped at a year, with one warning. */
  @Test
  void anAnnotationBeyondAYearIsCappedWithAWarningNamingNodeAndValue() {
    annotateNode("40000000000000000");
    try (LogCapture log = new LogCapture();
        TtlStoreStrategy strategy = TtlStoreStrategy.builder(api.client()).clock(clock).nodeName("node-1").build()) {
      ObjectStore<ConfigMap> store = strategy.createStore(ResourceType.CONFIG_MAPS);
      store.addReference("ns", "a", "pod-1");
      await().atMost(WAIT).until(() -> freshForAYear(store));
      assertThat(log.text()).containsOnlyOnce("Node node-1: annotation " + TtlStoreStrategy.TTL_ANNOTATION
          + "=40000000000000000 seconds is longer than the maximum of 31536000 seconds; using 31536000 seconds");
    }
  }

  @Test
  void aDefaultBeyondAYearIsCappedWithAWarning() {
    try (LogCapture log = new LogCapture();
        TtlStoreStrategy strategy = TtlStoreStrategy.builder(api.client()).clock(clock)
            .defaultTtl(Duration.ofSeconds(Long.MAX_VALUE)).build()) {
      ObjectStore<ConfigMap> store = strategy.createStore(ResourceType.CONFIG_MAPS);
      store.addReference("ns", "a", "pod-1");
      assertThat(freshForAYear(store)).isTrue();
      assertThat(log.text()).contains("Default TTL of " + Long.MAX_VALUE
          + " seconds is longer than the maximum of 31536000 seconds; using 31536000 seconds");
    }
  }

  @Test
  void aNegativeDefaultIsNamed() {
    assertThat(RecordingPublisher.waits(r -> new TtlStrategyComponent(r, api.client(),
        FixedNodeIdentity.named("node-1"),
        Converters.standardConverter().convert(Map.of("default.ttl.seconds", -1, "use.node.ttl.annotation", false))
            .to(TtlStrategyConfiguration.class), Map.of()), TtlStrategyComponent::deactivate))
        .contains("default.ttl.seconds: must be between 0 and 31536000 seconds, was -1");
  }
}
