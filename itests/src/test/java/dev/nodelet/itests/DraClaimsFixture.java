package dev.nodelet.itests;

import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimStatus;
import dev.nodelet.dra.claims.ContainerDevices;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import java.util.List;

/** Pods with claims allocated as the scheduler would, and what the claim manager shows of them. */
final class DraClaimsFixture {

  private DraClaimsFixture() {
  }

  /** A pod of this node with one claim, allocated one device of the driver's pool and reserved for the pod. */
  static Pod createPod(KubernetesClient kube, String driver, String pool, String pod, String claim,
      String device) {
    Pod created = kube.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata()
        .withNamespace("default").withName(pod).endMetadata().withNewSpec().withNodeName(NodeletTestSupport.NODE_NAME)
        .addNewResourceClaim().withName("gpu").withResourceClaimName(claim).endResourceClaim()
        .addToContainers(new ContainerBuilder().withName("main").withImage("busybox").withNewResources()
            .addNewClaim().withName("gpu").endClaim().endResources().build())
        .endSpec().build()).createOr(NonDeletingOperation::update);
    ResourceClaim made = kube.resources(ResourceClaim.class).inNamespace("default").resource(
        new ResourceClaimBuilder().withNewMetadata().withNamespace("default").withName(claim).endMetadata()
            .withNewSpec().withNewDevices().addNewRequest().withName("gpu").withNewExactly()
            .withDeviceClassName("gpu.example.com").endExactly().endRequest().endDevices().endSpec().build())
        .createOr(NonDeletingOperation::update);
    made.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addNewResult()
        .withDriver(driver).withPool(pool).withDevice(device).withRequest("gpu").endResult().endDevices()
        .endAllocation().addNewReservedFor().withResource("pods").withName(pod)
        .withUid(created.getMetadata().getUid()).endReservedFor().build());
    kube.resources(ResourceClaim.class).inNamespace("default").resource(made).updateStatus();
    // the claim is allocated after the pod was bound: the pod's next update brings the claim manager back to it
    kube.pods().inNamespace("default").withName(pod).edit(p -> new PodBuilder(p).editMetadata()
        .addToLabels("allocated", "true").endMetadata().build());
    return created;
  }

  static ClaimInfo info(ClaimStatus status, String claim) {
    return status.claims().stream().filter(c -> c.name().equals(claim)).findFirst().orElse(null);
  }

  static ClaimInfo.State state(ClaimStatus status, String claim) {
    ClaimInfo info = info(status, claim);
    return info == null ? null : info.state();
  }

  /** The pods of this node that use a claim, as namespace/name; empty if the claim is unknown. */
  static List<String> pods(ClaimStatus status, String claim) {
    ClaimInfo info = info(status, claim);
    return info == null ? List.of() : info.pods();
  }

  static List<String> cdi(ClaimStatus status, String pod) {
    return status.containers().stream().filter(c -> c.podName().equals(pod)).findFirst()
        .map(ContainerDevices::cdiDeviceIds).orElse(List.of());
  }

  /**
   * Deletes the pod. Here rather than in a Karaf test class: checking that a Pod is a HasMetadata would load fabric8
   * when the test class is verified, before the test installed it.
   */
  static void delete(KubernetesClient kube, Pod pod) {
    kube.resource(pod).withGracePeriod(0).delete(); // at once, as its node releases it: no node stops it here
  }
}
