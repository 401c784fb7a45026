package dev.nodelet.dra.claims.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.testing.FixedNodeIdentity;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.util.converter.Converters;

/**
 * The component's configuration: invalid at activation fails it naming the key; later an invalid one is refused and
 * the manager in service stays; a valid one replaces the manager.
 */
class ClaimsComponentTest {

  @TempDir
  Path state;

  private final EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
  private final KubernetesClient client = server.newClient();
  private final NodeIdentity node = FixedNodeIdentity.named("node-a");
  private ClaimsComponent component;

  @AfterEach
  void stop() {
    if (component != null) {
      component.deactivate();
    }
    client.close();
    server.close();
  }

  private ClaimsConfiguration config(Map<String, Object> properties) {
    Map<String, Object> all = new HashMap<>(properties);
    all.putIfAbsent("state.directory", state.toString());
    return Converters.standardConverter().convert(all).to(ClaimsConfiguration.class);
  }

  @Test
  void anInvalidValueAtActivationFailsItNamingTheKey() {
    assertThatThrownBy(() -> new ClaimsComponent(client, node, config(Map.of("sweep.period.seconds", 0))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("sweep.period.seconds: must be between 1 and 86400 seconds, was 0");
    assertThatThrownBy(() -> new ClaimsComponent(client, node, config(Map.of("retry.initial.millis", 1000,
        "retry.max.millis", 10))))
        .hasMessage("retry.max.millis: must be at least retry.initial.millis (1000), was 10");
    assertThatThrownBy(() -> new ClaimsComponent(client, node, config(Map.of("state.directory", " "))))
        .hasMessage("state.directory: must not be empty");
  }

  @Test
  void anInvalidChangeIsRefusedAndAValidOneReplacesTheManager() {
    component = new ClaimsComponent(client, node, config(Map.of("sweep.period.seconds", 60)));

    for (Map<String, Object> bad : List.<Map<String, Object>>of(Map.of("sweep.period.seconds", -1),
        Map.of("health.retry.millis", "soon"), Map.of("retry.max.millis", 0))) {
      component.modified(config(bad));
      assertThat(component.settings().sweepPeriod()).isEqualTo(Duration.ofSeconds(60));
    }

    component.modified(config(Map.of("sweep.period.seconds", 30)));
    assertThat(component.settings().sweepPeriod()).isEqualTo(Duration.ofSeconds(30));
    assertThat(component.checkpointProblem()).as("the new manager read the checkpoint").isEmpty();
    assertThat(component.claims()).isEmpty();
  }
}
