package dev.nodelet.dra.claims;

import static dev.nodelet.dra.claims.ClaimManagerRig.GPU;
import static dev.nodelet.dra.claims.ClaimManagerRig.NODE;
import static dev.nodelet.dra.claims.ClaimManagerRig.claim;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.PreparedDevice;
import dev.nodelet.dra.claims.internal.ClaimsMetrics;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The claim manager against the embedded API server, with claims allocated by the test as the scheduler would, on
 * drivable time: every step runs on the test's thread when the test lets time pass.
 */
class ClaimManagerTest {

  private static final String NIC = "nic.example.com";

  @AutoClose
  private final ClaimManagerRig rig = new ClaimManagerRig();
  private final TestDriver nic = new TestDriver(NIC);

  private ClaimManager manager(Duration sweep) {
    ClaimManager manager = rig.builder().sweepPeriod(sweep).retry(Duration.ofMillis(50), Duration.ofMillis(400))
        .build();
    manager.addDriver(rig.gpu);
    manager.addDriver(nic);
    manager.addHealthSource(rig.gpu);
    manager.addHealthSource(nic);
    return rig.start(manager);
  }

  private ClaimManager manager() {
    return manager(Duration.ofMinutes(10));
  }

  private Pod pod(String name, String uid, String... claims) {
    PodBuilder pod = new PodBuilder().withNewMetadata().withNamespace("default").withName(name).withUid(uid)
        .withResourceVersion("1").endMetadata().withNewSpec().withNodeName(NODE).endSpec();
    var container = new io.fabric8.kubernetes.api.model.ContainerBuilder().withName("main").withNewResources();
    for (String claim : claims) {
      pod.editSpec().addNewResourceClaim().withName("entry-" + claim).withResourceClaimName(claim)
          .endResourceClaim().endSpec();
      container.addNewClaim().withName("entry-" + claim).withRequest("req").endClaim();
    }
    return pod.editSpec().addToContainers(container.endResources().build()).endSpec().build();
  }

  /** A claim allocated with one device of the driver and reserved for the pod, as the scheduler leaves it. */
  private ResourceClaim allocate(String name, String driver, String podName, String podUid) {
    ResourceClaim created = rig.client.resources(ResourceClaim.class).inNamespace("default").resource(
        new ResourceClaimBuilder().withNewMetadata().withNamespace("default").withName(name).endMetadata()
            .withNewSpec().withNewDevices().addNewRequest().withName("req").withNewExactly()
            .withDeviceClassName("gpu.example.com").endExactly().endRequest().endDevices().endSpec().build())
        .create();
    created.setStatus(new io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder()
        .withNewAllocation().withNewDevices().addNewResult().withDriver(driver).withPool("pool")
        .withDevice(name + "-dev").withRequest("req").endResult().endDevices().endAllocation()
        .addNewReservedFor().withResource("pods").withName(podName).withUid(podUid).endReservedFor().build());
    return rig.client.resources(ResourceClaim.class).inNamespace("default").resource(created).updateStatus();
  }

  private static boolean prepared(ClaimManager manager, String... names) {
    for (String name : names) {
      ClaimInfo c = manager.claims().stream().filter(i -> i.name().equals(name)).findFirst().orElse(null);
      if (c == null || c.state() != ClaimInfo.State.PREPARED) {
        return false;
      }
    }
    return true;
  }

  @Test
  void aPodWithTwoClaimsOnTwoDriversIsPreparedOncePerClaimAndUnpreparedWhenDeleted() throws Exception {
    allocate("claim-gpu", GPU, "pod-1", "uid-1");
    allocate("claim-nic", NIC, "pod-1", "uid-1");
    ClaimManager manager = manager();
    Pod pod = pod("pod-1", "uid-1", "claim-gpu", "claim-nic");

    manager.podUpdated(pod);
    rig.scheduler.runDue();
    assertThat(prepared(manager, "claim-gpu", "claim-nic")).isTrue();
    manager.podUpdated(new PodBuilder(pod).editMetadata().withResourceVersion("2").endMetadata().build());
    rig.scheduler.runDue();
    assertThat(manager.containers()).extracting(ContainerDevices::cdiDeviceIds)
        .containsExactly(List.of("k8s.gpu.example.com/device=claim-gpu-dev"),
            List.of("k8s.nic.example.com/device=claim-nic-dev"));
    assertThat(rig.gpu.calls).containsExactly("prepare claim-gpu");
    assertThat(nic.calls).containsExactly("prepare claim-nic");
    assertThat(claim(manager, "claim-gpu").pods()).containsExactly("default/pod-1");
    assertThat(claim(manager, "claim-gpu").state()).isEqualTo(ClaimInfo.State.PREPARED);
    assertThat(claim(manager, "claim-gpu").devices().values()).flatMap(devices -> devices)
        .flatMap(PreparedDevice::cdiDeviceIds).containsExactly("k8s.gpu.example.com/device=claim-gpu-dev");
    assertThat(manager.containers()).anySatisfy(c -> assertThat(List.of(c.podNamespace(), c.podName(), c.container(),
        c.podClaim(), c.request())).containsExactly("default", "pod-1", "main", "entry-claim-nic", "req"));

    manager.podRemoved(pod);
    rig.scheduler.runDue();
    assertThat(manager.claims()).isEmpty();
    assertThat(rig.gpu.calls).containsExactly("prepare claim-gpu", "unprepare claim-gpu");
    assertThat(nic.calls).containsExactly("prepare claim-nic", "unprepare claim-nic");
    assertThat(checkpointEntries()).isEmpty();
  }

  @Test
  void aClaimSharedByTwoPodsIsPreparedOnceAndUnpreparedAfterTheLastPod() {
    ResourceClaim shared = allocate("shared", GPU, "pod-1", "uid-1");
    shared.getStatus().getReservedFor().add(new io.fabric8.kubernetes.api.model.resource.v1
        .ResourceClaimConsumerReferenceBuilder().withResource("pods").withName("pod-2").withUid("uid-2").build());
    rig.client.resources(ResourceClaim.class).inNamespace("default").resource(shared).updateStatus();
    ClaimManager manager = manager();
    Pod one = pod("pod-1", "uid-1", "shared");
    Pod two = pod("pod-2", "uid-2", "shared");
    manager.podUpdated(one);
    manager.podUpdated(two);
    rig.scheduler.runDue();
    assertThat(prepared(manager, "shared")).isTrue();
    assertThat(claim(manager, "shared").pods()).hasSize(2);

    manager.podRemoved(one);
    rig.scheduler.runDue();
    assertThat(claim(manager, "shared").pods()).containsExactly("default/pod-2");
    manager.podRemoved(two);
    rig.scheduler.runDue();
    assertThat(manager.claims()).isEmpty();
    assertThat(rig.gpu.calls).containsExactly("prepare shared", "unprepare shared");
  }

  @Test
  void aRestartKeepsTheClaimsOfRunningPodsAndUnpreparesThoseOfPodsThatDidNotComeBack() throws Exception {
    allocate("kept", GPU, "pod-1", "uid-1");
    allocate("gone", NIC, "pod-2", "uid-2");
    ClaimManager first = manager();
    Pod kept = new PodBuilder(pod("pod-1", "uid-1", "kept")).withNewStatus().withPhase("Running").endStatus()
        .build();
    first.podUpdated(kept);
    first.podUpdated(pod("pod-2", "uid-2", "gone"));
    rig.scheduler.runDue();
    assertThat(prepared(first, "kept", "gone")).isTrue();
    first.close();
    assertThat(checkpointEntries()).hasSize(2);

    // pod-2 was deleted while Nodelet was down
    ClaimManager second = manager(Duration.ofSeconds(60));
    second.podUpdated(kept);
    rig.scheduler.runDue();
    assertThat(second.claims()).as("pod-2 may still come back until the first sweep").hasSize(2);
    rig.scheduler.advance(Duration.ofSeconds(60));
    assertThat(second.claims()).hasSize(1);
    assertThat(claim(second, "kept").state()).isEqualTo(ClaimInfo.State.PREPARED);
    assertThat(claim(second, "kept").devices().get(GPU)).hasSize(1);
    assertThat(rig.gpu.calls).as("a running pod is not prepared again").containsExactly("prepare kept");
    assertThat(nic.calls).containsExactly("prepare gone", "unprepare gone");
    assertThat(checkpointEntries()).extracting(e -> e.get("ClaimName").asText()).containsExactly("kept");
  }

  @Test
  void aDriverThatFailsPrepareIsRetriedWithTheErrorVisible() {
    allocate("claim-gpu", GPU, "pod-1", "uid-1");
    rig.gpu.failPrepares.set(3);
    ClaimManager manager = manager();
    manager.podUpdated(pod("pod-1", "uid-1", "claim-gpu"));

    rig.scheduler.runDue();
    ClaimInfo failed = claim(manager, "claim-gpu");
    assertThat(failed.state()).isEqualTo(ClaimInfo.State.FAILED);
    assertThat(failed.error()).contains("gpu.example.com", "device busy");
    assertThat(failed.nextRetry()).isEqualTo(rig.scheduler.clock.instant().plusMillis(50));
    rig.scheduler.advance(Duration.ofMillis(50 + 100)); // the second and third attempts fail too
    assertThat(rig.gpu.calls).hasSize(3);
    assertThat(claim(manager, "claim-gpu").nextRetry()).isEqualTo(rig.scheduler.clock.instant().plusMillis(200));
    rig.scheduler.advance(Duration.ofMillis(200));
    assertThat(prepared(manager, "claim-gpu")).isTrue();
    assertThat(rig.gpu.calls).containsExactly("prepare claim-gpu", "prepare claim-gpu", "prepare claim-gpu",
        "prepare claim-gpu");
    assertThat(claim(manager, "claim-gpu").error()).isNull();
  }

  @Test
  void aClaimIsPreparedOnlyOnceItIsReservedForThePodAndUnknownDriversAreNamed() {
    rig.client.resources(ResourceClaim.class).inNamespace("default").resource(new ResourceClaimBuilder()
        .withNewMetadata().withNamespace("default").withName("later").endMetadata().withNewSpec().endSpec().build())
        .create();
    ClaimManager manager = manager();
    Pod pod = pod("pod-1", "uid-1", "later");
    manager.podUpdated(pod);
    rig.scheduler.runDue();
    assertThat(claim(manager, "later").error()).isEqualTo("ResourceClaim default/later is not reserved for pod"
        + " pod-1 yet");
    assertThat(rig.gpu.calls).isEmpty();

    rig.client.resources(ResourceClaim.class).inNamespace("default").withName("later").delete();
    await().until(() -> rig.client.resources(ResourceClaim.class).inNamespace("default").withName("later").get()
        == null);
    allocate("later", "fpga.example.com", "pod-1", "uid-1");
    rig.scheduler.advance(Duration.ofMillis(400)); // the longest retry delay
    assertThat(claim(manager, "later").error()).contains("needs DRA driver fpga.example.com, which is not"
        + " registered");
  }

  @Test
  void aTemplateClaimIsFoundThroughThePodStatusAndMustBeControlledByThePod() {
    ResourceClaim claim = allocate("pod-1-gpu-x7k2q", GPU, "pod-1", "uid-1");
    Pod pod = new PodBuilder().withNewMetadata().withNamespace("default").withName("pod-1").withUid("uid-1")
        .withResourceVersion("1").endMetadata().withNewSpec().withNodeName(NODE).addNewResourceClaim()
        .withName("gpu").withResourceClaimTemplateName("gpu-template").endResourceClaim().endSpec()
        .withNewStatus().addNewResourceClaimStatus().withName("gpu").withResourceClaimName("pod-1-gpu-x7k2q")
        .endResourceClaimStatus().endStatus().build();
    ClaimManager manager = manager();
    manager.podUpdated(pod);
    rig.scheduler.runDue();
    assertThat(claim(manager, "pod-1-gpu-x7k2q").error()).contains("no controller reference");

    claim.getMetadata().setOwnerReferences(List.of(new io.fabric8.kubernetes.api.model.OwnerReferenceBuilder()
        .withApiVersion("v1").withKind("Pod").withName("pod-1").withUid("uid-1").withController(true).build()));
    rig.client.resources(ResourceClaim.class).inNamespace("default").resource(claim).update();
    rig.scheduler.advance(Duration.ofMillis(400));
    assertThat(prepared(manager, "pod-1-gpu-x7k2q")).isTrue();
  }

  @Test
  void aCorruptCheckpointIsMovedAsideReportedAndRebuilt() throws Exception {
    Files.writeString(rig.state.resolve("dra_manager_state"), "{\"Data\":\"{}\",\"Checksum\":1}");
    allocate("claim-gpu", GPU, "pod-1", "uid-1");
    ClaimManager manager = manager();
    manager.podUpdated(pod("pod-1", "uid-1", "claim-gpu"));
    rig.scheduler.runDue();
    assertThat(prepared(manager, "claim-gpu")).isTrue();

    assertThat(manager.checkpointProblem()).hasValueSatisfying(p -> assertThat(p)
        .contains("checksum does not match", "dra_manager_state.corrupt-"));
    try (var files = Files.list(rig.state)) {
      assertThat(files.map(f -> f.getFileName().toString()))
          .anyMatch(f -> f.startsWith("dra_manager_state.corrupt-"));
    }
    assertThat(checkpointEntries()).hasSize(1);
  }

  @Test
  void deviceHealthIsKeptAndTurnsUnknownWhenItsTimeoutPasses() {
    ClaimManager manager = manager();
    rig.gpu.report(new DeviceHealth("pool", "gpu-0", DeviceHealth.Health.UNHEALTHY, rig.scheduler.clock.instant(),
        Duration.ofSeconds(30),
        "x".repeat(2000)));
    assertThat(manager.health()).singleElement().satisfies(h -> {
      assertThat(h.health()).isEqualTo(DeviceHealth.Health.UNHEALTHY);
      assertThat(h.message()).hasSize(1024).endsWith("...");
    });
    rig.scheduler.advance(Duration.ofSeconds(30));
    assertThat(manager.health().get(0).health()).isEqualTo(DeviceHealth.Health.UNHEALTHY);
    rig.scheduler.advance(Duration.ofSeconds(1));
    assertThat(manager.health().get(0).health()).isEqualTo(DeviceHealth.Health.UNKNOWN);
    assertThat(manager.health()).extracting(DeviceHealthInfo::driver, DeviceHealthInfo::pool, DeviceHealthInfo::device)
        .containsExactly(tuple("gpu.example.com", "pool", "gpu-0"));

    manager.removeDriver(rig.gpu);
    assertThat(manager.health()).as("its health source is still registered").hasSize(1);
    manager.removeHealthSource(rig.gpu);
    assertThat(manager.health()).isEmpty();
  }

  @Test
  void metricsCountClaimsByStateAndDevicesByHealthWithoutNames() throws Exception {
    allocate("claim-gpu", GPU, "pod-1", "uid-1");
    allocate("claim-nic", NIC, "pod-1", "uid-1");
    ClaimManager manager = manager();
    ClaimsMetrics metrics = new ClaimsMetrics(manager);
    manager.podUpdated(pod("pod-1", "uid-1", "claim-gpu", "claim-nic"));
    rig.scheduler.runDue();
    assertThat(prepared(manager, "claim-gpu", "claim-nic")).isTrue();
    rig.gpu.report(new DeviceHealth("pool", "claim-gpu-dev", DeviceHealth.Health.UNHEALTHY, Instant.now(),
        Duration.ofMinutes(5), "fan failed"));

    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter.create().write(out, metrics.collect());
    String text = out.toString(java.nio.charset.StandardCharsets.UTF_8);
    assertThat(text).contains("nodelet_dra_claims{state=\"prepared\"} 2.0",
        "nodelet_dra_claims{state=\"failed\"} 0.0",
        "nodelet_dra_device_health{driver=\"gpu.example.com\",health=\"unhealthy\"} 1.0")
        .doesNotContain("claim-gpu").doesNotContain("pod-1").doesNotContain("fan failed");
  }

  /** The checkpoint's entries, after checking its kubelet format and checksum. */
  private List<JsonNode> checkpointEntries() throws Exception {
    ObjectMapper json = new ObjectMapper();
    JsonNode outer = json.readTree(rig.state.resolve("dra_manager_state").toFile());
    String data = outer.get("Data").asText();
    CRC32 crc = new CRC32();
    crc.update(data.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    assertThat(outer.get("Checksum").asLong()).isEqualTo(crc.getValue());
    JsonNode inner = json.readTree(data);
    assertThat(inner.get("kind").asText()).isEqualTo("DRACheckpoint");
    assertThat(inner.get("apiVersion").asText()).isEqualTo("checkpoint.dra.kubelet.k8s.io/v1");
    List<JsonNode> entries = new ArrayList<>();
    inner.get("ClaimInfoStateList").forEach(entries::add);
    return entries;
  }
}
