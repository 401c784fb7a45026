package dev.nodelet.podsource.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.configuration.RecordingPublisher;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.testing.FixedNodeIdentity;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.podsource.RecordingListener;
import dev.nodelet.objectcache.PodListener;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.osgi.util.converter.Converters;

/**
 * The pod source's configuration: an invalid first one waits and holds readiness, later ones are refused when
 * invalid (the last good one stays) and applied in place when valid.
 */
class PodSourceConfigurationTest {

  private static final Duration WAIT = Duration.ofSeconds(30);

  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension();
  private ReflectorEngine reflectors;
  private PodSourceComponent component;
  private final RecordingListener listener = new RecordingListener();
  private final RecordingPublisher registry = new RecordingPublisher();

  private final NodeIdentity node = FixedNodeIdentity.named("node-a");

  @BeforeEach
  void start() {
    reflectors = ReflectorEngine.builder(api.client()).build();
  }

  @AfterEach
  void stop() {
    if (component != null) {
      component.deactivate();
    }
    reflectors.close();
  }

  private static PodSourceConfiguration config(Map<String, Object> properties) {
    return Converters.standardConverter().convert(properties).to(PodSourceConfiguration.class);
  }

  private void put(String name) {
    api.client().pods().inNamespace("ns").resource(new PodBuilder().withNewMetadata().withNamespace("ns").withName(name)
        .addToLabels("v", "1").endMetadata().withNewSpec().withNodeName("node-a").endSpec().build()).create();
  }

  @Test
  void everyInvalidFirstValueIsNamedAndHoldsReadiness() {
    Map.of(0, "listener.threads: must be between 1 and 64, was 0",
            1000, "listener.threads: must be between 1 and 64, was 1000",
            "two", "listener.threads: not a whole number").forEach((value, error) -> {
              PodSourceComponent waiting = new PodSourceComponent(registry, reflectors, node,
                  config(Map.of("listener.threads", value)));
              assertThat(registry.health()).startsWith("CRITICAL the pod source waits for a valid configuration"
                  + " dev.nodelet.podsource: " + error);
              waiting.deactivate();
              assertThat(registry.registered).isEmpty();
            });
  }

  @Test
  void anInvalidFirstConfigurationWatchesNothingUntilAValidOneStartsTheWatch() {
    component = new PodSourceComponent(registry, reflectors, node, config(Map.of("listener.threads", 0)));
    component.addListener(listener);
    put("a");
    assertThat(component.threads()).isZero();
    assertThat(api.server().openWatches("pods", "spec.nodeName=node-a")).isZero();
    assertThat(registry.health()).startsWith("CRITICAL");

    component.modified(config(Map.of("listener.threads", 2)), Map.of());
    assertThat(component.threads()).isEqualTo(2);
    assertThat(registry.healthChecks().keySet()).containsExactly("nodelet-pods-listed");
    await().atMost(WAIT).until(() -> listener.calls().equals(List.of("register ns/a v=1")));
  }

  @Test
  void readinessWaitsUntilTheNodesPodsReachedEveryListener() throws InterruptedException {
    put("a");
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    PodListener slow = new PodListener() {
      @Override
      public void registerPod(Pod pod) {
        entered.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }

      @Override
      public void unregisterPod(Pod pod) {
      }
    };
    component = new PodSourceComponent(registry, reflectors, node, config(Map.of()));
    component.addListener(listener);
    component.addListener(slow);
    HealthCheck check = registry.healthChecks().get("nodelet-pods-listed");
    assertThat(entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    // listed, and the other listener has the pod: the slow one has not returned yet
    await().atMost(WAIT).until(() -> listener.calls().equals(List.of("register ns/a v=1")));
    Result waiting = check.execute();
    assertThat(waiting.getStatus()).isEqualTo(Result.Status.TEMPORARILY_UNAVAILABLE);
    assertThat(waiting.iterator().next().getMessage()).contains("the pods of node node-a are not listed");

    release.countDown();
    await().atMost(WAIT).until(() -> check.execute().isOk());
    assertThat(check.execute().iterator().next().getMessage())
        .isEqualTo("node node-a: 1 pods listed and handed to the pod listeners");
    // a listener that comes later (a manager bundle updated) is ready once it has the pods
    RecordingListener late = new RecordingListener();
    component.addListener(late);
    await().atMost(WAIT).until(() -> check.execute().isOk());
    assertThat(late.calls()).containsExactly("register ns/a v=1");
  }

  @Test
  void invalidChangesAreRefusedAndValidOnesAppliedWithoutLosingAnEvent() {
    component = new PodSourceComponent(registry, reflectors, node, config(Map.of("listener.threads", 3)));
    component.addListener(listener);
    put("a");
    await().atMost(WAIT).until(() -> listener.calls().equals(List.of("register ns/a v=1")));

    for (Object bad : List.of(0, -4, 65, "two", Long.MAX_VALUE)) {
      component.modified(config(Map.of("listener.threads", bad)), Map.of());
      assertThat(component.threads()).as("after listener.threads=" + bad).isEqualTo(3);
    }
    put("b");
    await().atMost(WAIT).until(() -> listener.calls().size() == 2);

    component.modified(config(Map.of("listener.threads", 1)), Map.of());
    assertThat(component.threads()).isEqualTo(1);
    put("c");
    component.modified(config(Map.of("listener.threads", 8)), Map.of());
    assertThat(component.threads()).isEqualTo(8);
    put("d");
    await().atMost(WAIT).until(() -> listener.calls().size() == 4);
    assertThat(listener.calls()).containsExactly("register ns/a v=1", "register ns/b v=1", "register ns/c v=1",
        "register ns/d v=1");
  }

  @Test
  void theComponentWatchesTheNodeOfItsIdentityAndStopsEverythingOnDeactivation() {
    component = new PodSourceComponent(registry, reflectors, node, config(Map.of()));
    component.addListener(listener);
    put("p");
    await().atMost(WAIT).until(() -> listener.calls().equals(List.of("register ns/p v=1")));
    component.removeListener(listener);
    component.deactivate();
    component = null;
    await().atMost(WAIT).until(() -> api.server().openWatches("pods", "spec.nodeName=node-a") == 0
        && Thread.getAllStackTraces().keySet().stream()
            .noneMatch(t -> t.getName().startsWith("nodelet-podsource-") && t.isAlive()));
  }
}
