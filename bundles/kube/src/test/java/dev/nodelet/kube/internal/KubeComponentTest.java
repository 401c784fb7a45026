package dev.nodelet.kube.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.configuration.RecordingPublisher;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.kube.watch.ReflectorListener;
import dev.nodelet.kube.watch.Reflectors;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import dev.nodelet.testing.metrics.Scrape;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.osgi.util.converter.Converters;

/**
 * The component's configuration: an invalid first one registers nothing and holds readiness naming the key until a
 * valid one comes; an invalid change is refused with the key named and the client of the last good configuration
 * stays registered; a valid one replaces it.
 */
class KubeComponentTest {

  private EmbeddedApiServer server;
  private final RecordingPublisher registry = new RecordingPublisher();
  private KubeComponent component;

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
  }

  @AfterEach
  void stop() {
    if (component != null) {
      component.deactivate();
    }
    server.close();
  }

  private static KubeConfiguration config(Map<String, ?> properties) {
    return Converters.standardConverter().convert(properties).to(KubeConfiguration.class);
  }

  private KubeComponent component(Map<String, ?> properties) {
    return new KubeComponent(registry, name -> null, () -> "unused-host", config(properties));
  }

  /** The node name of each registered client, reflectors and identity service. */
  private List<Object> nodes(Class<?> type) {
    return registry.services(type).stream().map(service -> registry.registered.get(service)
        .get(NodeIdentity.NODE_NAME_PROPERTY)).toList();
  }

  @Test
  void aMisspeltKeyIsNamedWithTheKeyItMeant() {
    Map<String, Object> configured = Map.of("master.url", server.url(), "node.name", "node-a",
        "request.timout", 5000);
    Map<String, Object> properties = new java.util.HashMap<>(configured);
    properties.putAll(Map.of("service.pid", KubeComponent.PID, "component.name", "kube", "component.id", 1L));
    component = new KubeComponent(registry, name -> null, () -> "unused-host", new KubeMetrics(), config(configured),
        properties);
    assertThat(nodes(KubernetesClient.class)).as("served all the same").containsExactly("node-a");
    assertThat(component.unknownKeys()).containsExactly("Configuration dev.nodelet.kube: unknown key request.timout"
        + " is ignored; did you mean request.timeout? (etc/dev.nodelet.kube.cfg)");
  }

  @Test
  void invalidChangesAreRefusedAndTheClientInServiceStays() {
    component = component(Map.of("master.url", server.url(), "node.name", "node-a"));
    assertThat(nodes(KubernetesClient.class)).containsExactly("node-a");
    assertThat(nodes(Reflectors.class)).containsExactly("node-a");
    assertThat(nodes(NodeIdentity.class)).containsExactly("node-a");
    KubernetesClient client = registry.services(KubernetesClient.class).get(0);
    List<String> registered = List.copyOf(registry.history);

    List<Map<String, ?>> invalid = List.of(
        Map.of("master.url", "ftp://nowhere", "node.name", "node-a"),
        Map.of("master.url", server.url(), "node.name", "Bad_Node"),
        Map.of("master.url", server.url(), "node.name", "n".repeat(254)),
        Map.of("master.url", server.url(), "node.name", "node-a", "request.timeout", 0),
        Map.of("master.url", server.url(), "node.name", "node-a", "connection.timeout", -1),
        Map.of("kubeconfig.path", "/no/such/kubeconfig", "node.name", "node-a"),
        Map.of("master.url", server.url(), "node.name", "node-a", "context", "no-kubeconfig"));
    invalid.forEach(properties -> component.modified(config(properties), Map.of()));

    assertThat(registry.history).as("nothing unregistered or registered, no health check").isEqualTo(registered);
    assertThat(component.settings()).hasValueSatisfying(s -> assertThat(s.nodeName()).isEqualTo("node-a"));
    // the client still works
    assertThat(client.namespaces().list().getItems()).isNotNull();

    component.modified(config(Map.of("master.url", server.url(), "node.name", "node-b")), Map.of());
    assertThat(nodes(KubernetesClient.class)).containsExactly("node-b");
    assertThat(registry.services(KubernetesClient.class).get(0)).isNotSameAs(client);
  }

  /**
   * A valid change replaces what the component runs (its {@code Running}): the old client's services go, last
   * registered first, before the new client's come, and its node watch ends; deactivation ends the new one's.
   */
  @Test
  void aValidChangeWithdrawsTheOldClientBeforeTheNewOneComesAndDeactivationClosesIt() {
    component = component(Map.of("master.url", server.url(), "node.name", "node-a"));
    await().atMost(Duration.ofSeconds(30)).until(() -> server.openWatches("nodes") == 1);
    int before = registry.history.size();

    component.modified(config(Map.of("master.url", server.url(), "node.name", "node-b")), Map.of());
    String client = "[" + KubernetesClient.class.getName() + "]";
    String reflectors = "[" + Reflectors.class.getName() + "]";
    String check = "[" + HealthCheck.class.getName() + "]";
    String identity = "[" + NodeIdentity.class.getName() + "]";
    assertThat(registry.history.subList(before, registry.history.size())).containsExactly(
        "unregister " + identity, "unregister " + check, "unregister " + check, "unregister " + reflectors,
        "unregister " + client,
        "register " + client, "register " + reflectors, "register " + check, "register " + check,
        "register " + identity);
    assertThat(nodes(NodeIdentity.class)).containsExactly("node-b");
    await().atMost(Duration.ofSeconds(30)).until(() -> server.openWatches("nodes") == 1
        && server.requestCount(Verb.WATCH, "nodes") >= 2);

    component.deactivate();
    component = null;
    assertThat(registry.registered).isEmpty();
    await().atMost(Duration.ofSeconds(30)).until(() -> server.openWatches("nodes") == 0);
  }

  @Test
  void anInvalidConfigurationAtActivationRegistersNothingAndHoldsReadinessUntilAValidOneComes() {
    component = component(Map.of("master.url", server.url(), "node.name", "UPPER"));
    assertThat(registry.services(KubernetesClient.class)).isEmpty();
    assertThat(component.settings()).isEmpty();
    assertThat(registry.health()).startsWith("CRITICAL the Kubernetes client waits for a valid configuration"
        + " dev.nodelet.kube: node.name").endsWith("; correct it (etc/dev.nodelet.kube.cfg)");
    component.modified(config(Map.of("master.url", server.url(), "node.name", "Still_Bad")), Map.of());
    assertThat(registry.services(KubernetesClient.class)).isEmpty();
    assertThat(registry.health()).contains("Still_Bad");

    component.modified(config(Map.of("master.url", server.url(), "node.name", "node-a")), Map.of());
    assertThat(nodes(KubernetesClient.class)).containsExactly("node-a");
    // the waiting check went; the checks of the API server and of the node came with the client
    assertThat(registry.healthChecks()).containsOnlyKeys("nodelet-apiserver", "nodelet-node");
    Map<String, HealthCheck> checks = registry.healthChecks();
    assertThat(checks.get("nodelet-apiserver").execute().getStatus()).isEqualTo(Result.Status.OK);
    assertThat(checks.get("nodelet-node").execute().getStatus()).isEqualTo(Result.Status.TEMPORARILY_UNAVAILABLE);
    component.deactivate();
    assertThat(registry.registered).isEmpty();
    component = null;
  }

  @Test
  void theReflectorsServiceCountsEveryRestartedWatchInTheMetrics() {
    KubeMetrics metrics = new KubeMetrics();
    component = new KubeComponent(registry, name -> null, () -> "unused-host", metrics,
        config(Map.of("master.url", server.url(), "node.name", "node-a")));
    Reflectors reflectors = registry.services(Reflectors.class).get(0);
    reflectors.reflector(ConfigMap.class).namespace("default").listener(new ReflectorListener<>() { }).start();
    await().atMost(Duration.ofSeconds(10)).until(() -> server.openWatches("configmaps") == 1
        && server.openWatches("nodes") == 1); // and the node identity's
    assertThat(Scrape.value(metrics::collect, "nodelet_reflector_restart_requests_total")).as("first starts").isZero();

    server.cutWatches();
    await().atMost(Duration.ofSeconds(30)).until(() -> server.openWatches("configmaps") == 1
        && server.openWatches("nodes") == 1 && server.requestCount(Verb.WATCH, "configmaps") == 2
        && server.requestCount(Verb.WATCH, "nodes") == 2);
    assertThat(((ReflectorEngine) reflectors).restarts()).isEqualTo(2);
    assertThat(Scrape.value(metrics::collect, "nodelet_reflector_restart_requests_total")).isEqualTo(2);
  }
}
