package dev.nodelet.dra.claims;

import static dev.nodelet.dra.claims.ClaimManagerRig.NODE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.dra.claims.internal.ClaimReconciler;
import dev.nodelet.dra.claims.internal.FeatureGates;
import dev.nodelet.dra.claims.internal.ManagerSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The durability rule of preparing claims: a driver is called only once the checkpoint recording the pod is on disk,
 * and a claim shows as prepared only once the checkpoint holding its devices is. The checkpoint writes (and claim
 * reads) run on an io executor that the test runs by hand, the rest on drivable time.
 */
class ClaimDurabilityTest {

  @AutoClose
  private final ClaimManagerRig rig = new ClaimManagerRig();
  private final Queue<Runnable> io = new ArrayDeque<>();
  private final Executor heldIo = io::add;
  private ClaimReconciler manager;

  private void start() {
    manager = rig.closing(new ClaimReconciler(new ManagerSettings(rig.client, NODE, rig.state, rig.scheduler.clock,
        rig.scheduler, Duration.ofMinutes(10), Duration.ofMillis(50), Duration.ofMillis(400), Duration.ofSeconds(5),
        FeatureGates.defaults(), heldIo)));
    manager.addDriver(rig.gpu);
    manager.start();
    settle();
  }

  /** Runs the manager's work and its io until neither has anything left. */
  private void settle() {
    do {
      rig.scheduler.runDue();
      runIo();
      rig.scheduler.runDue();
    } while (!io.isEmpty());
  }

  private void runIo() {
    for (Runnable r; (r = io.poll()) != null; ) {
      r.run();
    }
  }

  /** Runs the manager's work until it waits for the io executor only. */
  private void work() {
    rig.scheduler.runDue();
  }

  private String onDisk() throws IOException {
    Path file = rig.state.resolve("dra_manager_state");
    return Files.exists(file) ? Files.readString(file) : "";
  }

  private ClaimInfo.State stateOf(String claim) {
    return manager.claims().stream().filter(c -> c.name().equals(claim)).map(ClaimInfo::state).findFirst()
        .orElse(null);
  }

  @Test
  void theDriverIsCalledAfterThePodIsOnDiskAndTheClaimShowsPreparedAfterItsDevicesAre() throws Exception {
    start();
    manager.podUpdated(rig.allocatedPod());
    work();
    runIo(); // the claim is read
    work(); // recorded in the cache; the checkpoint write waits in the io executor

    assertThat(onDisk()).doesNotContain("uid-a");
    assertThat(rig.gpu.calls).isEmpty();
    assertThat(stateOf("claim-a")).isEqualTo(ClaimInfo.State.PREPARING);

    runIo(); // the pod's record reaches the disk
    assertThat(onDisk()).contains("uid-a").doesNotContain("device=dev-a");
    work(); // so the driver is called; the devices' write waits

    assertThat(rig.gpu.calls).containsExactly("prepare claim-a");
    assertThat(onDisk()).doesNotContain("device=dev-a");
    assertThat(stateOf("claim-a")).isEqualTo(ClaimInfo.State.PREPARING);
    assertThat(manager.containers()).allSatisfy(c -> assertThat(c.cdiDeviceIds()).isEmpty());

    runIo(); // the devices reach the disk
    work();
    assertThat(onDisk()).contains("k8s.gpu.example.com/device=dev-a");
    assertThat(stateOf("claim-a")).isEqualTo(ClaimInfo.State.PREPARED);
  }

  @Test
  void aCheckpointThatCannotBeWrittenKeepsTheDriverUncalledUntilItCanBe() throws Exception {
    start();
    Path blocker = rig.state.resolve(".dra_manager_state.tmp");
    Files.createDirectories(blocker); // the temporary file cannot be created: every write fails
    manager.podUpdated(rig.allocatedPod());
    settle();

    assertThat(rig.gpu.calls).isEmpty();
    assertThat(stateOf("claim-a")).isEqualTo(ClaimInfo.State.FAILED);
    assertThat(manager.claims().get(0).error()).contains("writing the checkpoint failed");

    Files.delete(blocker);
    rig.scheduler.advance(Duration.ofMillis(60)); // the retry
    settle();
    assertThat(rig.gpu.calls).containsExactly("prepare claim-a");
    assertThat(stateOf("claim-a")).isEqualTo(ClaimInfo.State.PREPARED);
    assertThat(onDisk()).contains("uid-a", "k8s.gpu.example.com/device=dev-a");
  }
}
