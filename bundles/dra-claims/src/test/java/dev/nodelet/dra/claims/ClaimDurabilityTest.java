package dev.nodelet.dra.claims;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.dra.claims.internal.ClaimReconciler;
import dev.nodelet.dra.claims.internal.FeatureGates;
import dev.nodelet.dra.claims.internal.ManagerSettings;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The durability rule of preparing claims: a driver is called only once the checkpoint recording the pod is on disk,
 * and a claim shows as prepared only once the checkpoint holding its devices is. The checkpoint writes (and claim
 * reads) run on an io executor that the test runs by hand, the rest on drivable time.
 */
class ClaimDurabilityTest {

  private static final String NODE = "node-a";
  private static final String GPU = "gpu.example.com";

  @TempDir
  Path state;
  @AutoClose
  private final EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
  @AutoClose
  private final KubernetesClient client = server.newClient();
  private final ManualScheduler scheduler = new ManualScheduler();
  private final Queue<Runnable> io = new ArrayDeque<>();
  private final Executor heldIo = io::add;
  private final TestDriver gpu = new TestDriver(GPU);
  private ClaimReconciler manager;

  @AfterEach
  void stop() {
    manager.close();
  }

  private void start() {
    manager = new ClaimReconciler(new ManagerSettings(client, NODE, state, scheduler.clock, scheduler,
        Duration.ofMinutes(10), Duration.ofMillis(50), Duration.ofMillis(400), Duration.ofSeconds(5),
        FeatureGates.defaults(), heldIo));
    manager.addDriver(gpu);
    manager.start();
    settle();
  }

  /** Runs the manager's work and its io until neither has anything left. */
  private void settle() {
    do {
      scheduler.runDue();
      runIo();
      scheduler.runDue();
    } while (!io.isEmpty());
  }

  private void runIo() {
    for (Runnable r; (r = io.poll()) != null; ) {
      r.run();
    }
  }

  /** Runs the manager's work until it waits for the io executor only. */
  private void work() {
    scheduler.runDue();
  }

  private String onDisk() throws IOException {
    Path file = state.resolve("dra_manager_state");
    return Files.exists(file) ? Files.readString(file) : "";
  }

  private ClaimInfo.State stateOf(String claim) {
    return manager.claims().stream().filter(c -> c.name().equals(claim)).map(ClaimInfo::state).findFirst()
        .orElse(null);
  }

  private Pod allocatedPod() {
    ResourceClaim claim = client.resources(ResourceClaim.class).inNamespace("default").resource(
        new ResourceClaimBuilder().withNewMetadata().withNamespace("default").withName("claim-a").endMetadata()
            .withNewSpec().withNewDevices().addNewRequest().withName("req").withNewExactly()
            .withDeviceClassName("gpu").endExactly().endRequest().endDevices().endSpec().build()).create();
    claim.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addNewResult()
        .withDriver(GPU).withPool("pool").withDevice("dev-a").withRequest("req").endResult().endDevices()
        .endAllocation().addNewReservedFor().withResource("pods").withName("pod-a").withUid("uid-a")
        .endReservedFor().build());
    client.resources(ResourceClaim.class).inNamespace("default").resource(claim).updateStatus();
    return new PodBuilder().withNewMetadata().withNamespace("default").withName("pod-a").withUid("uid-a")
        .withResourceVersion("1").endMetadata().withNewSpec().withNodeName(NODE).addNewResourceClaim()
        .withName("gpu").withResourceClaimName("claim-a").endResourceClaim().endSpec().build();
  }

  @Test
  void theDriverIsCalledAfterThePodIsOnDiskAndTheClaimShowsPreparedAfterItsDevicesAre() throws Exception {
    start();
    manager.podUpdated(allocatedPod());
    work();
    runIo(); // the claim is read
    work(); // recorded in the cache; the checkpoint write waits in the io executor

    assertThat(onDisk()).doesNotContain("uid-a");
    assertThat(gpu.calls).isEmpty();
    assertThat(stateOf("claim-a")).isEqualTo(ClaimInfo.State.PREPARING);

    runIo(); // the pod's record reaches the disk
    assertThat(onDisk()).contains("uid-a").doesNotContain("device=dev-a");
    work(); // so the driver is called; the devices' write waits

    assertThat(gpu.calls).containsExactly("prepare claim-a");
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
    Path blocker = state.resolve(".dra_manager_state.tmp");
    Files.createDirectories(blocker); // the temporary file cannot be created: every write fails
    manager.podUpdated(allocatedPod());
    settle();

    assertThat(gpu.calls).isEmpty();
    assertThat(stateOf("claim-a")).isEqualTo(ClaimInfo.State.FAILED);
    assertThat(manager.claims().get(0).error()).contains("writing the checkpoint failed");

    Files.delete(blocker);
    scheduler.advance(Duration.ofMillis(60)); // the retry
    settle();
    assertThat(gpu.calls).containsExactly("prepare claim-a");
    assertThat(stateOf("claim-a")).isEqualTo(ClaimInfo.State.PREPARED);
    assertThat(onDisk()).contains("uid-a", "k8s.gpu.example.com/device=dev-a");
  }
}
