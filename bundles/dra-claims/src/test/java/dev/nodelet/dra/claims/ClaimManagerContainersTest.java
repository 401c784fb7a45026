package dev.nodelet.dra.claims;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ClaimManager#containers()}: where the kubelet's {@code GetResources} fails a container's start, the entry
 * says why; once the claim is prepared it has the CDI IDs and no error. On drivable time against the embedded API
 * server.
 */
class ClaimManagerContainersTest {

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

  @BeforeEach
  void start() {
    manager = ClaimManager.builder(client, NODE).stateDirectory(state).clock(scheduler.clock).executor(scheduler)
        .retry(Duration.ofSeconds(1), Duration.ofSeconds(1)).build();
    manager.addDriver(gpu);
    manager.start();
    scheduler.runDue();
  }

  @AfterEach
  void stop() {
    manager.close();
  }

  /** A pod whose container "main" uses each of {@code entries} (request "req"); the entries are added by the caller. */
  private static PodBuilder pod(String... entries) {
    var container = new ContainerBuilder().withName("main").withNewResources();
    for (String entry : entries) {
      container.addNewClaim().withName(entry).withRequest("req").endClaim();
    }
    return new PodBuilder().withNewMetadata().withNamespace("default").withName("pod-1").withUid("uid-1")
        .withResourceVersion("1").endMetadata().withNewSpec().withNodeName(NODE)
        .addToContainers(container.endResources().build()).endSpec();
  }

  private void allocate(String name, boolean allocated) {
    ResourceClaim created = client.resources(ResourceClaim.class).inNamespace("default").resource(
        new ResourceClaimBuilder().withNewMetadata().withNamespace("default").withName(name).endMetadata()
            .withNewSpec().endSpec().build()).create();
    if (!allocated) {
      return;
    }
    created.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addNewResult()
        .withDriver(GPU).withPool("pool").withDevice(name + "-dev").withRequest("req").endResult().endDevices()
        .endAllocation().addNewReservedFor().withResource("pods").withName("pod-1").withUid("uid-1")
        .endReservedFor().build());
    client.resources(ResourceClaim.class).inNamespace("default").resource(created).updateStatus();
  }

  private ContainerDevices entry(String podClaim) {
    return manager.containers().stream().filter(c -> c.podClaim().equals(podClaim)).findFirst().orElseThrow();
  }

  @Test
  void anEntryOfAClaimNotPreparedYetSaysWhyUntilItIsThenHasItsCdiIds() {
    allocate("claim-a", true);
    gpu.failPrepares.set(1);
    Pod pod = pod("gpu").editSpec().addNewResourceClaim().withName("gpu").withResourceClaimName("claim-a")
        .endResourceClaim().endSpec().build();

    manager.podUpdated(pod);
    assertThat(entry("gpu").error()).isEqualTo("ResourceClaim default/claim-a is not prepared: the claim manager has"
        + " no record of it (the pod was not handed to it, or not synced yet)");

    scheduler.runDue(); // the driver fails
    ContainerDevices failed = entry("gpu");
    assertThat(failed.ready()).isFalse();
    assertThat(failed.cdiDeviceIds()).isEmpty();
    assertThat(failed.error()).startsWith("ResourceClaim default/claim-a is not prepared (FAILED): ")
        .contains("device busy");

    scheduler.advance(Duration.ofSeconds(1)); // the retry succeeds
    ContainerDevices ready = entry("gpu");
    assertThat(ready.error()).isNull();
    assertThat(ready.ready()).isTrue();
    assertThat(ready.cdiDeviceIds()).containsExactly("k8s.gpu.example.com/device=claim-a-dev");
  }

  @Test
  void anEntryOfAClaimNotYetAllocatedAndReservedForThePodSaysSo() {
    allocate("claim-b", false);
    manager.podUpdated(pod("gpu").editSpec().addNewResourceClaim().withName("gpu").withResourceClaimName("claim-b")
        .endResourceClaim().endSpec().build());
    scheduler.runDue();

    assertThat(entry("gpu").error()).startsWith("ResourceClaim default/claim-b is not prepared (FAILED): ")
        .endsWith("is not reserved for pod pod-1 yet");
    assertThat(gpu.calls).isEmpty();
  }

  @Test
  void entriesThatCannotBeResolvedSayWhyAndATemplateWithoutAClaimNeedsNothing() {
    manager.podUpdated(pod("pending", "none", "missing", "neither").editSpec()
        .addNewResourceClaim().withName("pending").withResourceClaimTemplateName("gpu-template").endResourceClaim()
        .addNewResourceClaim().withName("none").withResourceClaimTemplateName("gpu-template").endResourceClaim()
        .addNewResourceClaim().withName("neither").endResourceClaim().endSpec()
        .withNewStatus().addNewResourceClaimStatus().withName("none").endResourceClaimStatus().endStatus().build());
    scheduler.runDue();

    assertThat(entry("pending").error()).isEqualTo("ResourceClaim not created yet for entry pending of pod pod-1");
    assertThat(entry("missing").error()).isEqualTo("pod pod-1 has no resourceClaims entry missing");
    assertThat(entry("neither").error()).isEqualTo("resourceClaims entry neither of pod pod-1 names neither"
        + " resourceClaimName nor resourceClaimTemplateName");
    ContainerDevices none = entry("none");
    assertThat(none.error()).isNull();
    assertThat(none.cdiDeviceIds()).isEmpty();
    assertThat(manager.containers()).extracting(ContainerDevices::container).containsOnly("main");
    assertThat(List.of(entry("pending").ready(), none.ready())).containsExactly(false, true);
  }
}
