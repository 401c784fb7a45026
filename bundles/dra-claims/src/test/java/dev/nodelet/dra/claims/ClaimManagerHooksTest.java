package dev.nodelet.dra.claims;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What an operator or a test drives on the claim manager without OSGi: forgetting a claim, and its metrics. */
class ClaimManagerHooksTest {

  private static final String NODE = "node-a";
  private static final String GPU = "gpu.example.com";

  @TempDir
  Path state;
  @AutoClose
  private final EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
  @AutoClose
  private final KubernetesClient client = server.newClient();
  private final ManualScheduler scheduler = new ManualScheduler();
  private final TestDriver gpu = new TestDriver(GPU);
  private ClaimManager manager;

  @AfterEach
  void stop() {
    manager.close();
  }

  private Pod preparedPod() {
    manager = ClaimManager.builder(client, NODE).stateDirectory(state).sweepPeriod(Duration.ofMinutes(10))
        .retry(Duration.ofMillis(50), Duration.ofMillis(400)).clock(scheduler.clock).executor(scheduler).build();
    manager.addDriver(gpu);
    manager.start();
    ResourceClaim claim = client.resources(ResourceClaim.class).inNamespace("default").resource(
        new ResourceClaimBuilder().withNewMetadata().withNamespace("default").withName("claim-a").endMetadata()
            .withNewSpec().withNewDevices().addNewRequest().withName("req").withNewExactly()
            .withDeviceClassName("gpu").endExactly().endRequest().endDevices().endSpec().build()).create();
    claim.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addNewResult()
        .withDriver(GPU).withPool("pool").withDevice("dev-a").withRequest("req").endResult().endDevices()
        .endAllocation().addNewReservedFor().withResource("pods").withName("pod-a").withUid("uid-a")
        .endReservedFor().build());
    client.resources(ResourceClaim.class).inNamespace("default").resource(claim).updateStatus();
    Pod pod = new PodBuilder().withNewMetadata().withNamespace("default").withName("pod-a").withUid("uid-a")
        .withResourceVersion("1").endMetadata().withNewSpec().withNodeName(NODE).addNewResourceClaim()
        .withName("gpu").withResourceClaimName("claim-a").endResourceClaim().endSpec().build();
    manager.podUpdated(pod);
    scheduler.runDue();
    assertThat(manager.claims()).extracting(ClaimInfo::state).containsExactly(ClaimInfo.State.PREPARED);
    return pod;
  }

  @Test
  void aClaimWhoseDriverIsGoneForGoodIsForgottenWithoutUnpreparing() throws Exception {
    Pod pod = preparedPod();
    manager.removeDriver(gpu); // gone for good
    manager.podRemoved(pod);
    scheduler.runDue();
    assertThat(manager.claims()).singleElement().satisfies(c -> assertThat(c.error()).contains("not registered"));

    CompletableFuture<Boolean> forgotten = manager.forgetClaim("default", "claim-a");
    scheduler.runDue();

    assertThat(forgotten).isCompletedWithValue(true);
    assertThat(manager.claims()).isEmpty();
    assertThat(Files.readString(state.resolve("dra_manager_state"))).doesNotContain("claim-a");
    assertThat(gpu.calls).containsExactly("prepare claim-a");
    scheduler.advance(Duration.ofSeconds(1)); // no retry of the unprepare either
    assertThat(gpu.calls).containsExactly("prepare claim-a");
  }

  @Test
  void aClaimAnActivePodUsesIsNotForgottenAndAnUnknownOneIsReported() {
    preparedPod();

    CompletableFuture<Boolean> refused = manager.forgetClaim("default", "claim-a");
    CompletableFuture<Boolean> unknown = manager.forgetClaim("default", "no-such-claim");
    scheduler.runDue();

    assertThat(refused).failsWithin(Duration.ZERO).withThrowableOfType(ExecutionException.class)
        .withCauseInstanceOf(IllegalStateException.class).withMessageContaining("uid-a");
    assertThat(unknown).isCompletedWithValue(false);
    assertThat(manager.claims()).extracting(ClaimInfo::state).containsExactly(ClaimInfo.State.PREPARED);
  }

  @Test
  void theMetricsCountTheClaimsByState() {
    preparedPod();

    MetricSnapshots snapshots = manager.metrics().collect();

    MetricSnapshot claims = snapshots.stream().filter(m -> m.getMetadata().getName().equals("nodelet_dra_claims"))
        .findFirst().orElseThrow();
    assertThat(((GaugeSnapshot) claims).getDataPoints())
        .filteredOn(d -> d.getLabels().get("state").equals("prepared"))
        .singleElement().satisfies(d -> assertThat(d.getValue()).isEqualTo(1.0));
  }
}
