package dev.nodelet.dra.claims;

import static dev.nodelet.dra.claims.ClaimManagerRig.GPU;
import static dev.nodelet.dra.claims.ClaimManagerRig.NODE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.nodelet.dra.DeviceHealth;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ResourceHealth;
import io.fabric8.kubernetes.api.model.ResourceStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * Device health reaches the pod's {@code allocatedResourcesStatus} on the embedded API server and survives a
 * restart, on drivable time.
 */
class ClaimManagerHealthTest {

  @AutoClose
  private final ClaimManagerRig rig = new ClaimManagerRig();

  private ClaimManager manager() {
    ClaimManager manager = rig.builder().build();
    manager.addDriver(rig.gpu);
    manager.addHealthSource(rig.gpu);
    return rig.start(manager);
  }

  /** Two devices, one per request, reserved for the pod and controlled by it (a claim made from a template). */
  private void templateClaim(String podUid) {
    ResourceClaim created = rig.client.resources(ResourceClaim.class).inNamespace("default").resource(
        new ResourceClaimBuilder().withNewMetadata().withNamespace("default").withName("pod-1-gpu-x7k2q")
            .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("v1").withKind("Pod").withName("pod-1")
                .withUid(podUid).withController(true).build())
            .endMetadata().withNewSpec().endSpec().build()).create();
    created.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices()
        .addNewResult().withDriver(GPU).withPool("pool").withDevice("gpu-0").withRequest("big").endResult()
        .addNewResult().withDriver(GPU).withPool("pool").withDevice("gpu-1").withRequest("small").endResult()
        .endDevices().endAllocation().addNewReservedFor().withResource("pods").withName("pod-1").withUid(podUid)
        .endReservedFor().build());
    rig.client.resources(ResourceClaim.class).inNamespace("default").resource(created).updateStatus();
  }

  /** pod-1 on the API server with a running container that uses the whole claim and one that uses a request. */
  private Pod runningPod() {
    Pod pod = rig.client.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata()
        .withNamespace("default").withName("pod-1").endMetadata().withNewSpec().withNodeName(NODE)
        .addNewResourceClaim().withName("gpu").withResourceClaimTemplateName("gpu-template").endResourceClaim()
        .addNewContainer().withName("main").withImage("app").withNewResources().addNewClaim().withName("gpu")
        .endClaim().endResources().endContainer()
        .addNewContainer().withName("helper").withImage("app").withNewResources().addNewClaim().withName("gpu")
        .withRequest("small").endClaim().endResources().endContainer().endSpec().build()).create();
    pod.setStatus(new io.fabric8.kubernetes.api.model.PodStatusBuilder().withPhase("Running")
        .addNewResourceClaimStatus().withName("gpu").withResourceClaimName("pod-1-gpu-x7k2q").endResourceClaimStatus()
        .addNewContainerStatus().withName("main").withImage("app").withReady(true).withRestartCount(0)
        .withNewState().withNewRunning().endRunning().endState().endContainerStatus()
        .addNewContainerStatus().withName("helper").withImage("app").withReady(true).withRestartCount(0)
        .withNewState().withNewRunning().endRunning().endState().endContainerStatus().build());
    return rig.client.pods().inNamespace("default").resource(pod).updateStatus();
  }

  private List<ResourceStatus> statusOf(String container) {
    return rig.client.pods().inNamespace("default").withName("pod-1").get().getStatus().getContainerStatuses().stream()
        .filter(c -> c.getName().equals(container)).findFirst().map(ContainerStatus::getAllocatedResourcesStatus)
        .orElse(null);
  }

  private void report(String device, DeviceHealth.Health health, Duration timeout) {
    rig.gpu.report(new DeviceHealth("pool", device, health, rig.scheduler.clock.instant(), timeout, ""));
    rig.scheduler.runDue();
  }

  @Test
  void deviceHealthIsWrittenToThePodPerClaimEntryAndRequestAndTurnsUnknownWhenTheLeaseRunsOut() {
    Pod pod = runningPod();
    templateClaim(pod.getMetadata().getUid());
    ClaimManager manager = manager();
    manager.podUpdated(pod);
    rig.scheduler.runDue();
    assertThat(statusOf("main")).singleElement().satisfies(s -> {
      assertThat(s.getName()).isEqualTo("claim:gpu");
      assertThat(s.getResources()).extracting(ResourceHealth::getResourceID, ResourceHealth::getHealth)
          .containsExactly(tuple("k8s.gpu.example.com/device=gpu-0", "Unknown"),
              tuple("k8s.gpu.example.com/device=gpu-1", "Unknown"));
    });

    report("gpu-1", DeviceHealth.Health.UNHEALTHY, Duration.ofSeconds(30));
    report("gpu-0", DeviceHealth.Health.HEALTHY, Duration.ofSeconds(60));
    assertThat(statusOf("main")).singleElement().extracting(ResourceStatus::getResources).asList()
        .extracting("resourceID", "health").containsExactly(tuple("k8s.gpu.example.com/device=gpu-0", "Healthy"),
            tuple("k8s.gpu.example.com/device=gpu-1", "Unhealthy"));
    assertThat(statusOf("helper")).singleElement().satisfies(s -> {
      assertThat(s.getName()).isEqualTo("claim:gpu/small");
      assertThat(s.getResources()).extracting(ResourceHealth::getResourceID, ResourceHealth::getHealth)
          .containsExactly(tuple("k8s.gpu.example.com/device=gpu-1", "Unhealthy"));
    });

    // no new report: the lease of gpu-1 runs out and the pod says so without waiting for the driver
    rig.scheduler.advance(Duration.ofSeconds(31));
    assertThat(statusOf("helper")).singleElement().extracting(ResourceStatus::getResources).asList()
        .extracting("health").containsExactly("Unknown");
    assertThat(statusOf("main")).singleElement().extracting(ResourceStatus::getResources).asList()
        .extracting("health").containsExactly("Healthy", "Unknown");
  }

  @Test
  void anUnchangedPodIsNotWrittenAgain() {
    Pod pod = runningPod();
    templateClaim(pod.getMetadata().getUid());
    ClaimManager manager = manager();
    manager.podUpdated(pod);
    rig.scheduler.runDue();
    Pod written = rig.client.pods().inNamespace("default").withName("pod-1").get();
    manager.podUpdated(written); // the pod source reports the write back
    report("gpu-0", DeviceHealth.Health.UNKNOWN, Duration.ofSeconds(30)); // no change to what the pod says
    rig.scheduler.runDue();
    assertThat(rig.client.pods().inNamespace("default").withName("pod-1").get().getMetadata().getResourceVersion())
        .isEqualTo(written.getMetadata().getResourceVersion());
  }

  @Test
  void healthIsPersistedNextToTheCheckpointAndRestoredAtStart() {
    ClaimManager first = manager();
    report("gpu-0", DeviceHealth.Health.UNHEALTHY, Duration.ofMinutes(5));
    assertThat(rig.state.resolve("dra_health_state")).exists();
    first.close();

    ClaimManager second = manager();
    rig.gpu.healthListener = null; // the driver has not reported since the restart
    assertThat(second.health()).extracting(DeviceHealthInfo::driver, DeviceHealthInfo::device,
        DeviceHealthInfo::health).containsExactly(tuple(GPU, "gpu-0", DeviceHealth.Health.UNHEALTHY));
  }

  @Test
  void aRollingUpdateToADriverWithoutHealthClearsTheHealthTheOlderOneReported() {
    ClaimManager manager = manager();
    report("gpu-0", DeviceHealth.Health.HEALTHY, Duration.ofMinutes(5));
    assertThat(manager.health()).hasSize(1);

    manager.addDriver(new dev.nodelet.testing.dra.PreparingDriver(GPU)); // the newer one registers no health
    rig.scheduler.runDue();
    assertThat(manager.health()).as("the older one still reports").hasSize(1);
    manager.removeDriver(rig.gpu);
    manager.removeHealthSource(rig.gpu);
    rig.scheduler.runDue();
    assertThat(manager.health()).isEmpty();
    assertThat(rig.gpu.healthListener).as("its stream ended").isNull();
  }

  @Test
  void aHealthSourceIsFollowedWithoutAClaimPreparationOfItsName() {
    ClaimManager manager = manager();
    TestDriver nic = new TestDriver("nic.example.com");
    manager.addHealthSource(nic);
    rig.scheduler.runDue();
    nic.report(new DeviceHealth("pool", "nic-0", DeviceHealth.Health.UNHEALTHY, rig.scheduler.clock.instant(),
        Duration.ofMinutes(5), ""));
    rig.scheduler.runDue();
    assertThat(manager.health()).extracting(DeviceHealthInfo::driver, DeviceHealthInfo::health)
        .contains(tuple("nic.example.com", DeviceHealth.Health.UNHEALTHY));
  }

  @Test
  void removingAnOlderRegistrationLeavesTheNewerOnesHealthStreamAlone() {
    ClaimManager manager = manager();
    TestDriver newer = new TestDriver(GPU);
    manager.addDriver(newer);
    manager.addHealthSource(newer);
    newer.report(new DeviceHealth("pool", "gpu-0", DeviceHealth.Health.UNHEALTHY, rig.scheduler.clock.instant(),
        Duration.ofMinutes(5), ""));
    rig.scheduler.runDue();

    manager.removeDriver(rig.gpu);
    manager.removeHealthSource(rig.gpu);
    rig.scheduler.runDue();
    assertThat(newer.healthWatches).as("the newer stream was not restarted").hasValue(1);
    assertThat(newer.healthListener).isNotNull();
    assertThat(manager.health()).extracting(DeviceHealthInfo::health).containsExactly(DeviceHealth.Health.UNHEALTHY);
  }

  @Test
  void anUnreadableHealthStateIsAnEmptyOne() throws Exception {
    Files.writeString(rig.state.resolve("dra_health_state"), "{not json");
    assertThat(manager().health()).isEmpty();
  }
}
