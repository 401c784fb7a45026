package dev.nodelet.dra.claims.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.configuration.RecordingPublisher;
import dev.nodelet.dra.claims.ClaimStatus;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.testing.FixedNodeIdentity;
import dev.nodelet.objectcache.PodListener;
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
 * The component's configuration: an invalid first one waits, naming the key; later an invalid one is refused and
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
  void anInvalidFirstValueWaitsNamingTheKey() {
    assertThat(RecordingPublisher.waits(r -> new ClaimsComponent(r, client, node,
        config(Map.of("sweep.period.seconds", 0)), Map.of()), ClaimsComponent::deactivate))
        .contains("sweep.period.seconds: must be between 1 and 86400 seconds, was 0");
    assertThat(RecordingPublisher.waits(r -> new ClaimsComponent(r, client, node,
        config(Map.of("retry.initial.millis", 1000,
        "retry.max.millis", 10)), Map.of()), ClaimsComponent::deactivate))
        .contains("retry.max.millis: must be at least retry.initial.millis (1000), was 10");
    assertThat(RecordingPublisher.waits(r -> new ClaimsComponent(r, client, node, config(Map.of("state.directory",
        " ")), Map.of()), ClaimsComponent::deactivate))
        .contains("state.directory: must not be empty");
    assertThat(RecordingPublisher.waits(r -> new ClaimsComponent(r, client, node, config(Map.of("feature.gates",
        "DRAWorkloadResourceClaims=yes")), Map.of()), ClaimsComponent::deactivate))
        .contains("feature.gates: expected Name=true or Name=false, separated by commas, was"
            + " \"DRAWorkloadResourceClaims=yes\"");
    assertThat(RecordingPublisher.waits(r -> new ClaimsComponent(r, client, node, config(Map.of("feature.gates",
        "DRAMagic=true")), Map.of()), ClaimsComponent::deactivate))
        .contains("feature.gates: unknown feature gate DRAMagic; known: DRAExtendedResource,"
            + " DRAOptionalNodeOperations, DRAWorkloadResourceClaims");
  }

  @Test
  void featureGatesDefaultToKubernetes136AndAreSetByName() {
    component = new ClaimsComponent(new RecordingPublisher(), client, node, config(Map.of()), Map.of());
    assertThat(component.settings().featureGates()).isEmpty();
    assertThat(component.settings().toString()).endsWith("feature.gates=DRAExtendedResource=true,"
        + "DRAOptionalNodeOperations=false,DRAWorkloadResourceClaims=false");

    component.modified(config(Map.of("feature.gates", " DRAWorkloadResourceClaims=true, DRAExtendedResource=false")),
        Map.of());
    assertThat(component.settings().featureGates()).containsExactlyInAnyOrderEntriesOf(Map.of(
        "DRAWorkloadResourceClaims", true, "DRAExtendedResource", false));
    assertThat(component.settings().toString()).endsWith("feature.gates=DRAExtendedResource=false,"
        + "DRAOptionalNodeOperations=false,DRAWorkloadResourceClaims=true");

    component.modified(config(Map.of("feature.gates", "DRAOptionalNodeOperations=true")), Map.of());
    assertThat(component.settings().toString()).endsWith("feature.gates=DRAExtendedResource=true,"
        + "DRAOptionalNodeOperations=true,DRAWorkloadResourceClaims=false");
  }

  @Test
  void anInvalidFirstConfigurationRegistersNoListenerUntilAValidOneStartsTheManager() {
    RecordingPublisher registry = new RecordingPublisher();
    component = new ClaimsComponent(registry, client, node, config(Map.of("sweep.period.seconds", 0)), Map.of());
    assertThat(registry.health()).isEqualTo("CRITICAL the DRA claim manager waits for a valid configuration"
        + " dev.nodelet.dra.claims: sweep.period.seconds: must be between 1 and 86400 seconds, was 0; correct it"
        + " (etc/dev.nodelet.dra.claims.cfg)");
    assertThat(registry.services(PodListener.class)).isEmpty();
    assertThat(registry.services(ClaimStatus.class)).isEmpty();
    assertThat(component.claims()).as("what the metrics ask meanwhile").isEmpty();

    component.modified(config(Map.of("sweep.period.seconds", 30)), Map.of("sweep.period.seconds", 30));
    // the waiting check went; the claims check came with the status
    assertThat(registry.healthChecks()).containsOnlyKeys("nodelet-dra-claims");
    assertThat(registry.services(PodListener.class)).containsExactly(component);
    assertThat(registry.services(ClaimStatus.class)).containsExactly(component);
    assertThat(component.settings().sweepPeriod()).isEqualTo(Duration.ofSeconds(30));
    assertThat(component.checkpointProblem()).as("the manager read the checkpoint").isEmpty();
  }

  @Test
  void anInvalidChangeIsRefusedAndAValidOneReplacesTheManager() {
    component = new ClaimsComponent(new RecordingPublisher(), client, node, config(Map.of("sweep.period.seconds",
        60)), Map.of());

    for (Map<String, Object> bad : List.<Map<String, Object>>of(Map.of("sweep.period.seconds", -1),
        Map.of("health.retry.millis", "soon"), Map.of("retry.max.millis", 0))) {
      component.modified(config(bad), Map.of());
      assertThat(component.settings().sweepPeriod()).isEqualTo(Duration.ofSeconds(60));
    }

    component.modified(config(Map.of("sweep.period.seconds", 30)), Map.of());
    assertThat(component.settings().sweepPeriod()).isEqualTo(Duration.ofSeconds(30));
    assertThat(component.checkpointProblem()).as("the new manager read the checkpoint").isEmpty();
    assertThat(component.claims()).isEmpty();
  }
}
