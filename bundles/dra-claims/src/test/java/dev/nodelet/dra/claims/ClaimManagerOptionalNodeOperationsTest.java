package dev.nodelet.dra.claims;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.dra.PreparedDevice;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * KEP-5945, DRAOptionalNodeOperations: a driver whose devices all skip a node operation in a claim is neither looked
 * up nor called for it; with the gate off such a claim fails naming the gate; unprepare follows what the checkpoint
 * recorded.
 */
class ClaimManagerOptionalNodeOperationsTest {

  private static final String NODE = "node-a";
  private static final String GPU = "gpu.example.com";
  private static final String CONTROL = "control-plane.example.com";
  private static final String GATE = "DRAOptionalNodeOperations";

  @TempDir
  Path state;
  @AutoClose
  private final EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
  @AutoClose
  private final KubernetesClient client = server.newClient();
  private final ManualScheduler scheduler = new ManualScheduler();
  private final TestDriver gpu = new TestDriver(GPU);
  private final List<ClaimManager> managers = new ArrayList<>();

  @AfterEach
  void stop() {
    managers.forEach(ClaimManager::close);
  }

  private ClaimManager manager(boolean gate) {
    ClaimManager manager = ClaimManager.builder(client, NODE).stateDirectory(state).sweepPeriod(Duration.ofMinutes(1))
        .retry(Duration.ofMillis(50), Duration.ofMillis(400)).clock(scheduler.clock).executor(scheduler)
        .featureGates(Map.of(GATE, gate)).build();
    managers.add(manager);
    manager.addDriver(gpu);
    manager.start();
    scheduler.runDue();
    return manager;
  }

  private static DeviceRequestAllocationResult result(String driver, String device, String... skip) {
    DeviceRequestAllocationResult r = new DeviceRequestAllocationResultBuilder().withDriver(driver).withPool("pool")
        .withDevice(device).withRequest("req").build();
    if (skip.length > 0) {
      r.setAdditionalProperty("skipNodeOperations", List.of(skip)); // not in fabric8 7.5.2's model
    }
    return r;
  }

  private Pod allocated(String claimName, String podName, String podUid, DeviceRequestAllocationResult... results) {
    ResourceClaim claim = client.resources(ResourceClaim.class).inNamespace("default").resource(
        new ResourceClaimBuilder().withNewMetadata().withNamespace("default").withName(claimName).endMetadata()
            .withNewSpec().withNewDevices().addNewRequest().withName("req").withNewExactly()
            .withDeviceClassName("gpu").endExactly().endRequest().endDevices().endSpec().build()).create();
    claim.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addToResults(results)
        .endDevices().endAllocation().addNewReservedFor().withResource("pods").withName(podName).withUid(podUid)
        .endReservedFor().build());
    client.resources(ResourceClaim.class).inNamespace("default").resource(claim).updateStatus();
    return new PodBuilder().withNewMetadata().withNamespace("default").withName(podName).withUid(podUid)
        .withResourceVersion("1").endMetadata().withNewSpec().withNodeName(NODE).addNewResourceClaim()
        .withName("entry").withResourceClaimName(claimName).endResourceClaim().endSpec().build();
  }

  private static ClaimInfo claim(ClaimManager manager, String name) {
    return manager.claims().stream().filter(c -> c.name().equals(name)).findFirst().orElse(null);
  }

  @Test
  void aDriverThatSkipsEveryNodeOperationIsNeitherLookedUpNorCalled() {
    ClaimManager manager = manager(true);
    Pod pod = allocated("virtual", "pod-1", "uid-1", result(CONTROL, "virtual-0", "*")); // CONTROL never registers

    manager.podUpdated(pod);
    scheduler.runDue();

    ClaimInfo prepared = claim(manager, "virtual");
    assertThat(prepared.state()).isEqualTo(ClaimInfo.State.PREPARED);
    assertThat(prepared.devices().get(CONTROL)).extracting(PreparedDevice::deviceName, PreparedDevice::cdiDeviceIds)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("virtual-0", List.of()));

    manager.podRemoved(pod);
    scheduler.runDue();
    assertThat(manager.claims()).isEmpty(); // unprepared without a driver
    assertThat(gpu.calls).isEmpty();
  }

  @Test
  void withTheGateOffAClaimThatSkipsNodeOperationsFailsNamingTheGate() {
    ClaimManager manager = manager(false);
    manager.podUpdated(allocated("skips", "pod-1", "uid-1", result(GPU, "dev-0", "*")));
    scheduler.runDue();

    ClaimInfo failed = claim(manager, "skips");
    assertThat(failed.state()).isEqualTo(ClaimInfo.State.FAILED);
    assertThat(failed.error()).contains(GATE, "feature.gates");
    assertThat(gpu.calls).isEmpty();
  }

  @Test
  void onlyAnOperationThatEveryDeviceOfTheDriverSkipsIsSkipped() {
    ClaimManager manager = manager(true);
    manager.podUpdated(allocated("mixed", "pod-1", "uid-1", result(GPU, "dev-0", "*"),
        result(GPU, "dev-1", "NodeUnprepareResources", "SomethingNew")));
    scheduler.runDue();

    // dev-1 does not skip preparing, so the driver prepares the claim; both skip unpreparing
    assertThat(claim(manager, "mixed").state()).isEqualTo(ClaimInfo.State.PREPARED);
    assertThat(gpu.calls).containsExactly("prepare mixed");
  }

  @Test
  void unprepareFollowsTheCheckpointedSkipEvenWithTheGateTurnedOff() throws Exception {
    ClaimManager first = manager(true);
    first.podUpdated(allocated("kept", "pod-1", "uid-1", result(GPU, "dev-0", "NodeUnprepareResources")));
    scheduler.runDue();
    assertThat(gpu.calls).containsExactly("prepare kept");
    assertThat(Files.readString(state.resolve("dra_manager_state"))).contains("SkipNodeOperations");
    first.close();

    ClaimManager second = manager(false); // the pod does not come back: its claim is unprepared at the first sweep
    scheduler.advance(Duration.ofMinutes(1));

    assertThat(second.claims()).isEmpty();
    assertThat(gpu.calls).containsExactly("prepare kept"); // no NodeUnprepareResources
  }
}
