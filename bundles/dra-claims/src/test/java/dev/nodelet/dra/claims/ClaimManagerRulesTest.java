package dev.nodelet.dra.claims;

import static dev.nodelet.dra.claims.ClaimManagerRig.GPU;
import static dev.nodelet.dra.claims.ClaimManagerRig.NODE;
import static dev.nodelet.dra.claims.ClaimManagerRig.claim;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReferenceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The kubelet's rules that the claim manager follows, on drivable time (a {@link ManualScheduler}: every step runs
 * on the test's thread) against the embedded API server.
 */
class ClaimManagerRulesTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @AutoClose
  private final ClaimManagerRig rig = new ClaimManagerRig();

  private ClaimManager manager(Map<String, Boolean> gates) {
    return rig.manager(b -> b.featureGates(gates));
  }

  private ClaimManager manager() {
    return manager(Map.of());
  }

  private static PodBuilder pod(String name, String uid, String... claims) {
    PodBuilder pod = new PodBuilder().withNewMetadata().withNamespace("default").withName(name).withUid(uid)
        .withResourceVersion("1").endMetadata().withNewSpec().withNodeName(NODE).endSpec();
    var container = new ContainerBuilder().withName("main").withNewResources();
    for (String claim : claims) {
      pod.editSpec().addNewResourceClaim().withName("entry-" + claim).withResourceClaimName(claim)
          .endResourceClaim().endSpec();
      container.addNewClaim().withName("entry-" + claim).endClaim();
    }
    return pod.editSpec().addToContainers(container.endResources().build()).endSpec();
  }

  private static Pod running(PodBuilder pod) {
    return pod.withNewStatus().withPhase("Running").endStatus().build();
  }

  /** A claim allocated with one device of request {@code request}, reserved for one consumer. */
  private ResourceClaim allocate(String name, String request, String apiGroup, String resource, String consumer,
      String consumerUid) {
    ResourceClaim created = rig.client.resources(ResourceClaim.class).inNamespace("default").resource(
        new ResourceClaimBuilder().withNewMetadata().withNamespace("default").withName(name).endMetadata()
            .withNewSpec().endSpec().build()).create();
    created.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addNewResult()
        .withDriver(GPU).withPool("pool").withDevice(name + "-dev").withRequest(request).endResult().endDevices()
        .endAllocation().addToReservedFor(new ResourceClaimConsumerReferenceBuilder().withApiGroup(apiGroup)
            .withResource(resource).withName(consumer).withUid(consumerUid).build()).build());
    return rig.client.resources(ResourceClaim.class).inNamespace("default").resource(created).updateStatus();
  }

  private ResourceClaim allocate(String name, String podName, String podUid) {
    return allocate(name, "req", null, "pods", podName, podUid);
  }

  @Test
  void afterARestartAStartingPodIsPreparedAgainWhileARunningPodKeepsItsDevicesFromTheCheckpoint() {
    allocate("running", "pod-1", "uid-1");
    allocate("starting", "pod-2", "uid-2");
    ClaimManager first = manager();
    first.podUpdated(running(pod("pod-1", "uid-1", "running")));
    first.podUpdated(pod("pod-2", "uid-2", "starting").build()); // prepared, its containers not started yet
    rig.scheduler.runDue();
    assertThat(rig.gpu.calls).containsExactlyInAnyOrder("prepare running", "prepare starting");
    first.close();

    // a reboot may have wiped the CDI specs: the kubelet prepares a claim again when a pod starts with it
    ClaimManager second = manager();
    second.podUpdated(running(pod("pod-1", "uid-1", "running")));
    second.podUpdated(pod("pod-2", "uid-2", "starting").build());
    rig.scheduler.runDue();

    assertThat(rig.gpu.calls).filteredOn("prepare running"::equals).as("a running pod is not prepared again")
        .hasSize(1);
    assertThat(rig.gpu.calls).filteredOn("prepare starting"::equals).hasSize(2);
    assertThat(claim(second, "running").state()).isEqualTo(ClaimInfo.State.PREPARED);
    assertThat(second.containers()).extracting(ContainerDevices::podName, ContainerDevices::cdiDeviceIds)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("pod-1", List.of("k8s.gpu.example.com/device=running-dev")),
            org.assertj.core.groups.Tuple.tuple("pod-2", List.of("k8s.gpu.example.com/device=starting-dev")));

    // a new pod that starts with the running pod's claim prepares it again too
    ResourceClaim shared = rig.client.resources(ResourceClaim.class).inNamespace("default").withName("running").get();
    shared.getStatus().getReservedFor().add(new ResourceClaimConsumerReferenceBuilder().withResource("pods")
        .withName("pod-3").withUid("uid-3").build());
    rig.client.resources(ResourceClaim.class).inNamespace("default").resource(shared).updateStatus();
    second.podUpdated(pod("pod-3", "uid-3", "running").build());
    rig.scheduler.runDue();
    assertThat(rig.gpu.calls).filteredOn("prepare running"::equals).hasSize(2);
  }

  @Test
  void aMissingCheckpointIsCreatedAtStart() throws Exception {
    assertThat(rig.state.resolve("dra_manager_state")).doesNotExist();
    manager();
    assertThat(entries()).isEmpty();
  }

  @Test
  void nullListsOfACheckpointEntryAreWrittenBackAsNull() throws Exception {
    // as the kubelet writes an entry whose driver returned no request names and no CDI IDs
    String data = "{\"kind\":\"DRACheckpoint\",\"apiVersion\":\"checkpoint.dra.kubelet.k8s.io/v1\","
        + "\"ClaimInfoStateList\":[{\"ClaimUID\":\"" + allocate("kept", "pod-1", "uid-1").getMetadata().getUid()
        + "\",\"ClaimName\":\"kept\",\"Namespace\":\"default\",\"PodUIDs\":{\"uid-1\":{}},\"DriverState\":{\""
        + GPU + "\":{\"Devices\":[{\"PoolName\":\"pool\",\"DeviceName\":\"kept-dev\",\"ShareID\":null,"
        + "\"RequestNames\":null,\"CDIDeviceIDs\":null}]}}}]}";
    writeCheckpoint(data);
    allocate("other", "pod-2", "uid-2");
    ClaimManager manager = manager();
    manager.podUpdated(running(pod("pod-1", "uid-1", "kept")));
    manager.podUpdated(pod("pod-2", "uid-2", "other").build()); // its prepare rewrites the checkpoint
    rig.scheduler.runDue();

    assertThat(rig.gpu.calls).containsExactly("prepare other");
    JsonNode kept = entries().stream().filter(e -> e.get("ClaimName").asText().equals("kept")).findFirst()
        .orElseThrow();
    JsonNode device = kept.get("DriverState").get(GPU).get("Devices").get(0);
    assertThat(device.get("RequestNames").isNull()).as("RequestNames " + device).isTrue();
    assertThat(device.get("CDIDeviceIDs").isNull()).as("CDIDeviceIDs " + device).isTrue();
    assertThat(kept.get("PodUIDs").has("uid-1")).isTrue();
  }

  private Pod inGroup(PodBuilder builder, String group) {
    Pod pod = builder.build();
    // spec.schedulingGroup is newer than the fabric8 model: it arrives as an additional property
    pod.getSpec().setAdditionalProperty("schedulingGroup", Map.of("podGroupName", group));
    return pod;
  }

  @Test
  void aClaimReservedForThePodGroupIsRefusedNamingTheGateWhenItIsOff() {
    allocate("group-claim", "req", "scheduling.k8s.io", "podgroups", "group-a", "group-uid");
    ClaimManager manager = manager();
    manager.podUpdated(inGroup(pod("pod-1", "uid-1", "group-claim"), "group-a"));
    rig.scheduler.runDue();

    assertThat(claim(manager, "group-claim").error()).isEqualTo("ResourceClaim default/group-claim is reserved for"
        + " PodGroup group-a of pod pod-1, which needs feature gate DRAWorkloadResourceClaims (off; turn it on in"
        + " feature.gates of dev.nodelet.dra.claims)");
    assertThat(rig.gpu.calls).isEmpty();
  }

  @Test
  void withTheGateOnAClaimReservedForThePodGroupAndATemplateClaimItControlsArePrepared() {
    allocate("group-claim", "req", "scheduling.k8s.io", "podgroups", "group-a", "group-uid");
    ResourceClaim fromTemplate = allocate("group-a-gpu-x7k2q", "req", "scheduling.k8s.io", "podgroups", "group-a",
        "group-uid");
    fromTemplate.getMetadata().setOwnerReferences(List.of(new OwnerReferenceBuilder()
        .withApiVersion("scheduling.k8s.io/v1alpha2").withKind("PodGroup").withName("group-a").withUid("group-uid")
        .withController(true).build()));
    rig.client.resources(ResourceClaim.class).inNamespace("default").resource(fromTemplate).update();
    ClaimManager manager = manager(Map.of("DRAWorkloadResourceClaims", true));
    PodBuilder pod = pod("pod-1", "uid-1", "group-claim").editSpec().addNewResourceClaim().withName("gpu")
        .withResourceClaimTemplateName("gpu-template").endResourceClaim().endSpec().withNewStatus()
        .addNewResourceClaimStatus().withName("gpu").withResourceClaimName("group-a-gpu-x7k2q")
        .endResourceClaimStatus().endStatus();
    manager.podUpdated(inGroup(pod, "group-a"));
    rig.scheduler.runDue();

    assertThat(rig.gpu.calls).containsExactlyInAnyOrder("prepare group-a-gpu-x7k2q", "prepare group-claim");
    assertThat(claim(manager, "group-claim").state()).isEqualTo(ClaimInfo.State.PREPARED);
    assertThat(claim(manager, "group-a-gpu-x7k2q").state()).isEqualTo(ClaimInfo.State.PREPARED);
  }

  @Test
  void anUnknownFeatureGateIsRefusedNamingTheKnownOnes() {
    assertThatThrownBy(() -> ClaimManager.builder(rig.client, NODE).featureGates(Map.of("DRAMagic", true)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unknown feature gate DRAMagic; known: DRAExtendedResource, DRAOptionalNodeOperations, DRAWorkloadResourceClaims");
  }

  private static Pod extendedResourcePod() {
    return new PodBuilder().withNewMetadata().withNamespace("default").withName("pod-1").withUid("uid-1")
        .withResourceVersion("1").endMetadata().withNewSpec().withNodeName(NODE).addNewContainer().withName("main")
        .endContainer().addNewContainer().withName("sidecar").endContainer().endSpec().withNewStatus()
        .withNewExtendedResourceClaimStatus().withResourceClaimName("pod-1-extended-resources-abcde")
        .addNewRequestMapping().withContainerName("main").withResourceName("example.com/gpu")
        .withRequestName("container-0-request-0").endRequestMapping().endExtendedResourceClaimStatus().endStatus()
        .build();
  }

  @Test
  void aClaimNamedOnlyInExtendedResourceClaimStatusIsPreparedAndItsContainersGetTheCdiIds() {
    allocate("pod-1-extended-resources-abcde", "container-0-request-0", null, "pods", "pod-1", "uid-1");
    ClaimManager manager = manager();
    manager.podUpdated(extendedResourcePod());
    rig.scheduler.runDue();

    assertThat(rig.gpu.calls).containsExactly("prepare pod-1-extended-resources-abcde");
    assertThat(manager.containers()).singleElement().satisfies(c -> {
      assertThat(c.container()).isEqualTo("main");
      assertThat(c.podClaim()).isEqualTo("pod-1-extended-resources-abcde");
      assertThat(c.request()).isEqualTo("container-0-request-0");
      assertThat(c.cdiDeviceIds()).containsExactly("k8s.gpu.example.com/device=pod-1-extended-resources-abcde-dev");
    });
  }

  @Test
  void withDraExtendedResourceOffTheExtendedResourceClaimIsLeftAlone() {
    allocate("pod-1-extended-resources-abcde", "container-0-request-0", null, "pods", "pod-1", "uid-1");
    ClaimManager manager = manager(Map.of("DRAExtendedResource", false));
    manager.podUpdated(extendedResourcePod());
    rig.scheduler.runDue();

    assertThat(rig.gpu.calls).isEmpty();
    assertThat(manager.claims()).isEmpty();
    assertThat(manager.containers()).isEmpty();
  }

  private void writeCheckpoint(String data) throws Exception {
    CRC32 crc = new CRC32();
    crc.update(data.getBytes(StandardCharsets.UTF_8));
    Files.writeString(rig.state.resolve("dra_manager_state"), JSON.writeValueAsString(Map.of("Data", data,
        "Checksum", crc.getValue())));
  }

  private List<JsonNode> entries() throws Exception {
    JsonNode outer = JSON.readTree(rig.state.resolve("dra_manager_state").toFile());
    List<JsonNode> out = new ArrayList<>();
    JSON.readTree(outer.get("Data").asText()).get("ClaimInfoStateList").forEach(out::add);
    return out;
  }
}
