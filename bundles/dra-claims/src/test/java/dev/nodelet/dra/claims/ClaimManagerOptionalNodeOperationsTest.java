package dev.nodelet.dra.claims;

import static dev.nodelet.dra.claims.ClaimManagerRig.GPU;
import static dev.nodelet.dra.claims.ClaimManagerRig.claim;
import static dev.nodelet.dra.claims.ClaimManagerRig.result;
import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.dra.PreparedDevice;
import io.fabric8.kubernetes.api.model.Pod;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * KEP-5945, DRAOptionalNodeOperations: a driver whose devices all skip a node operation in a claim is neither looked
 * up nor called for it; with the gate off such a claim fails naming the gate; unprepare follows what the checkpoint
 * recorded.
 */
class ClaimManagerOptionalNodeOperationsTest {

  private static final String CONTROL = "control-plane.example.com";
  private static final String GATE = "DRAOptionalNodeOperations";

  @AutoClose
  private final ClaimManagerRig rig = new ClaimManagerRig();

  private ClaimManager manager(boolean gate) {
    return rig.manager(b -> b.sweepPeriod(Duration.ofMinutes(1)).retry(Duration.ofMillis(50), Duration.ofMillis(400))
        .featureGates(Map.of(GATE, gate)));
  }

  @Test
  void aDriverThatSkipsEveryNodeOperationIsNeitherLookedUpNorCalled() {
    ClaimManager manager = manager(true);
    Pod pod = rig.allocated("virtual", "pod-1", "uid-1", result(CONTROL, "virtual-0", "*")); // CONTROL never registers

    manager.podUpdated(pod);
    rig.scheduler.runDue();

    ClaimInfo prepared = claim(manager, "virtual");
    assertThat(prepared.state()).isEqualTo(ClaimInfo.State.PREPARED);
    assertThat(prepared.devices().get(CONTROL)).extracting(PreparedDevice::deviceName, PreparedDevice::cdiDeviceIds)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("virtual-0", List.of()));

    manager.podRemoved(pod);
    rig.scheduler.runDue();
    assertThat(manager.claims()).isEmpty(); // unprepared without a driver
    assertThat(rig.gpu.calls).isEmpty();
  }

  @Test
  void withTheGateOffAClaimThatSkipsNodeOperationsFailsNamingTheGate() {
    ClaimManager manager = manager(false);
    manager.podUpdated(rig.allocated("skips", "pod-1", "uid-1", result(GPU, "dev-0", "*")));
    rig.scheduler.runDue();

    ClaimInfo failed = claim(manager, "skips");
    assertThat(failed.state()).isEqualTo(ClaimInfo.State.FAILED);
    assertThat(failed.error()).contains(GATE, "feature.gates");
    assertThat(rig.gpu.calls).isEmpty();
  }

  @Test
  void onlyAnOperationThatEveryDeviceOfTheDriverSkipsIsSkipped() {
    ClaimManager manager = manager(true);
    manager.podUpdated(rig.allocated("mixed", "pod-1", "uid-1", result(GPU, "dev-0", "*"),
        result(GPU, "dev-1", "NodeUnprepareResources", "SomethingNew")));
    rig.scheduler.runDue();

    // dev-1 does not skip preparing, so the driver prepares the claim; both skip unpreparing
    assertThat(claim(manager, "mixed").state()).isEqualTo(ClaimInfo.State.PREPARED);
    assertThat(rig.gpu.calls).containsExactly("prepare mixed");
  }

  @Test
  void unprepareFollowsTheCheckpointedSkipEvenWithTheGateTurnedOff() throws Exception {
    ClaimManager first = manager(true);
    first.podUpdated(rig.allocated("kept", "pod-1", "uid-1", result(GPU, "dev-0", "NodeUnprepareResources")));
    rig.scheduler.runDue();
    assertThat(rig.gpu.calls).containsExactly("prepare kept");
    assertThat(Files.readString(rig.state.resolve("dra_manager_state"))).contains("SkipNodeOperations");
    first.close();

    ClaimManager second = manager(false); // the pod does not come back: its claim is unprepared at the first sweep
    rig.scheduler.advance(Duration.ofMinutes(1));

    assertThat(second.claims()).isEmpty();
    assertThat(rig.gpu.calls).containsExactly("prepare kept"); // no NodeUnprepareResources
  }
}
