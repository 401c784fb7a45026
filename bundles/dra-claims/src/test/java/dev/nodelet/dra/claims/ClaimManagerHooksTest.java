package dev.nodelet.dra.claims;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.nio.file.Files;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** What an operator or a test drives on the claim manager without OSGi: forgetting a claim, and its metrics. */
class ClaimManagerHooksTest {

  @AutoClose
  private final ClaimManagerRig rig = new ClaimManagerRig();
  private ClaimManager manager;

  private Pod preparedPod() {
    manager = rig.manager(b -> b.sweepPeriod(Duration.ofMinutes(10)).retry(Duration.ofMillis(50),
        Duration.ofMillis(400)));
    Pod pod = rig.allocatedPod();
    manager.podUpdated(pod);
    rig.scheduler.runDue();
    assertThat(manager.claims()).extracting(ClaimInfo::state).containsExactly(ClaimInfo.State.PREPARED);
    return pod;
  }

  @Test
  void aClaimWhoseDriverIsGoneForGoodIsForgottenWithoutUnpreparing() throws Exception {
    Pod pod = preparedPod();
    manager.removeDriver(rig.gpu); // gone for good
    manager.podRemoved(pod);
    rig.scheduler.runDue();
    assertThat(manager.claims()).singleElement().satisfies(c -> assertThat(c.error()).contains("not registered"));

    CompletableFuture<Boolean> forgotten = manager.forgetClaim("default", "claim-a");
    rig.scheduler.runDue();

    assertThat(forgotten).isCompletedWithValue(true);
    assertThat(manager.claims()).isEmpty();
    assertThat(Files.readString(rig.state.resolve("dra_manager_state"))).doesNotContain("claim-a");
    assertThat(rig.gpu.calls).containsExactly("prepare claim-a");
    rig.scheduler.advance(Duration.ofSeconds(1)); // no retry of the unprepare either
    assertThat(rig.gpu.calls).containsExactly("prepare claim-a");
  }

  @Test
  void aClaimAnActivePodUsesIsNotForgottenAndAnUnknownOneIsReported() {
    preparedPod();

    CompletableFuture<Boolean> refused = manager.forgetClaim("default", "claim-a");
    CompletableFuture<Boolean> unknown = manager.forgetClaim("default", "no-such-claim");
    rig.scheduler.runDue();

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
