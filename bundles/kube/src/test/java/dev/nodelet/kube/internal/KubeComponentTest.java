package dev.nodelet.kube.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.osgi.util.converter.Converters;

/**
 * The component's configuration: an invalid change is refused with the key named and the client of the last good
 * configuration stays registered; a valid one replaces it.
 */
class KubeComponentTest {

  private EmbeddedApiServer server;
  private final List<String> registry = new ArrayList<>();
  private final List<KubernetesClient> registered = new ArrayList<>();
  private KubeComponent component;

  /** Records what would be registered as services, in order. */
  private final KubeComponent.Publisher publisher = (client, reflectors, identity, nodeName) -> {
    registry.add("register " + nodeName);
    registered.add(client);
    return () -> registry.add("unregister " + nodeName);
  };

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
    return new KubeComponent(publisher, name -> null, () -> "unused-host", config(properties));
  }

  @Test
  void invalidChangesAreRefusedAndTheClientInServiceStays() {
    component = component(Map.of("master.url", server.url(), "node.name", "node-a"));
    assertThat(registry).containsExactly("register node-a");
    KubernetesClient client = registered.get(0);

    List<Map<String, ?>> invalid = List.of(
        Map.of("master.url", "ftp://nowhere", "node.name", "node-a"),
        Map.of("master.url", server.url(), "node.name", "Bad_Node"),
        Map.of("master.url", server.url(), "node.name", "n".repeat(254)),
        Map.of("master.url", server.url(), "node.name", "node-a", "request.timeout", 0),
        Map.of("master.url", server.url(), "node.name", "node-a", "connection.timeout", -1),
        Map.of("kubeconfig.path", "/no/such/kubeconfig", "node.name", "node-a"),
        Map.of("master.url", server.url(), "node.name", "node-a", "context", "no-kubeconfig"));
    invalid.forEach(properties -> component.modified(config(properties)));

    assertThat(registry).as("nothing unregistered or registered").containsExactly("register node-a");
    assertThat(component.settings()).hasValueSatisfying(s -> assertThat(s.nodeName()).isEqualTo("node-a"));
    // the client still works
    assertThat(client.namespaces().list().getItems()).isNotNull();

    component.modified(config(Map.of("master.url", server.url(), "node.name", "node-b")));
    assertThat(registry).containsExactly("register node-a", "unregister node-a", "register node-b");
    assertThat(registered.get(1)).isNotSameAs(client);
  }

  @Test
  void anInvalidConfigurationAtActivationRegistersNothingUntilAValidOneComes() {
    component = component(Map.of("master.url", server.url(), "node.name", "UPPER"));
    assertThat(registry).isEmpty();
    assertThat(component.settings()).isEmpty();
    component.modified(config(Map.of("master.url", server.url(), "node.name", "Still_Bad")));
    assertThat(registry).isEmpty();
    component.modified(config(Map.of("master.url", server.url(), "node.name", "node-a")));
    assertThat(registry).containsExactly("register node-a");
    component.deactivate();
    assertThat(registry).containsExactly("register node-a", "unregister node-a");
    component = null;
  }
}
