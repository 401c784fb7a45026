package dev.nodelet.dra.claims.internal;

import dev.nodelet.dra.claims.internal.PodClaims.PodClaim;
import dev.nodelet.dra.claims.internal.PodClaims.PodClaimException;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The kubelet's checks of a claim before anything is recorded: read from the API server (no cache), reserved for
 * the pod (or, with DRAWorkloadResourceClaims, its PodGroup), a template claim controlled by the pod (or its
 * PodGroup), allocated, and every driver of the allocation registered.
 */
final class ClaimValidation {

  static final String POD_GROUPS = "podgroups";
  static final String SCHEDULING_GROUP = "scheduling.k8s.io";

  private final KubernetesClient client;
  private final Drivers drivers;
  private final FeatureGates gates;

  ClaimValidation(KubernetesClient client, Drivers drivers, FeatureGates gates) {
    this.client = client;
    this.drivers = drivers;
    this.gates = gates;
  }

  /**
   * A claim that passed, with the drivers of its allocation in name order and, per driver, the node operations that
   * all its results skip (DRAOptionalNodeOperations).
   */
  record Valid(ResourceClaim claim, List<String> drivers, Map<String, Set<String>> skips) {
    List<DeviceRequestAllocationResult> results() {
      return Optional.ofNullable(claim.getStatus().getAllocation().getDevices().getResults()).orElse(List.of());
    }
  }

  Valid check(Pod pod, PodClaim pc) throws PodClaimException {
    String ns = pod.getMetadata().getNamespace();
    ResourceClaim claim = read(ns, pc.name());
    String podUid = pod.getMetadata().getUid();
    String podName = pod.getMetadata().getName();
    String key = ns + "/" + pc.name();
    String group = PodClaims.podGroup(pod);
    if (pc.fromTemplate()) {
      List<OwnerReference> owners = Optional.ofNullable(claim.getMetadata().getOwnerReferences()).orElse(List.of());
      boolean byPod = owners.stream().anyMatch(o -> Boolean.TRUE.equals(o.getController())
          && podUid.equals(o.getUid()));
      boolean byGroup = group != null && owners.stream().anyMatch(o -> Boolean.TRUE.equals(o.getController())
          && "PodGroup".equals(o.getKind()) && group.equals(o.getName()));
      if (!byPod && byGroup) {
        requireGate("ResourceClaim " + key + " is controlled by PodGroup " + group + " of pod " + podName, pc);
      } else if (!byPod) {
        throw new PodClaimException(pc.name(), "ResourceClaim " + key + " was not created for pod " + podName
            + " (no controller reference to it)");
      }
    }
    var status = claim.getStatus();
    List<ResourceClaimConsumerReference> reserved = status == null || status.getReservedFor() == null ? List.of()
        : status.getReservedFor();
    if (reserved.stream().noneMatch(r -> podUid.equals(r.getUid()))) {
      boolean forGroup = group != null && reserved.stream().anyMatch(r -> POD_GROUPS.equals(r.getResource())
          && SCHEDULING_GROUP.equals(r.getApiGroup()) && group.equals(r.getName()));
      if (!forGroup) {
        throw new PodClaimException(pc.name(), "ResourceClaim " + key + " is not reserved for pod " + podName
            + " yet");
      }
      requireGate("ResourceClaim " + key + " is reserved for PodGroup " + group + " of pod " + podName, pc);
    }
    if (status.getAllocation() == null || status.getAllocation().getDevices() == null) {
      throw new PodClaimException(pc.name(), "ResourceClaim " + key + " is not allocated yet");
    }
    Set<String> names = new TreeSet<>();
    List<DeviceRequestAllocationResult> results = Optional.ofNullable(status.getAllocation().getDevices()
        .getResults()).orElse(List.of());
    results.forEach(r -> names.add(r.getDriver()));
    Map<String, Set<String>> skips = new TreeMap<>();
    if (NodeOperations.anyAsked(results)) {
      if (!gates.enabled(FeatureGates.OPTIONAL_NODE_OPERATIONS)) {
        throw new PodClaimException(pc.name(), "ResourceClaim " + key + " asks to skip node operations ("
            + NodeOperations.FIELD + " of its allocation), which needs feature gate "
            + FeatureGates.OPTIONAL_NODE_OPERATIONS + " (off; turn it on in feature.gates of dev.nodelet.dra.claims)");
      }
      names.forEach(name -> {
        Set<String> skipped = NodeOperations.skippedBy(name, results);
        if (!skipped.isEmpty()) {
          skips.put(name, skipped);
        }
      });
    }
    for (String name : names) {
      if (skips.getOrDefault(name, Set.of()).contains(NodeOperations.PREPARE)) {
        continue; // neither looked up nor called
      }
      if (drivers.preparing(name) == null) {
        throw new PodClaimException(pc.name(), "ResourceClaim " + key + " needs DRA driver " + name
            + ", which is not registered on this node or does not prepare claims");
      }
    }
    return new Valid(claim, List.copyOf(names), Map.copyOf(skips));
  }

  private void requireGate(String what, PodClaim pc) throws PodClaimException {
    if (!gates.enabled(FeatureGates.WORKLOAD_RESOURCE_CLAIMS)) {
      throw new PodClaimException(pc.name(), what + ", which needs feature gate "
          + FeatureGates.WORKLOAD_RESOURCE_CLAIMS + " (off; turn it on in feature.gates of dev.nodelet.dra.claims)");
    }
  }

  private ResourceClaim read(String ns, String name) throws PodClaimException {
    try {
      ResourceClaim claim = client.resources(ResourceClaim.class).inNamespace(ns).withName(name).get();
      if (claim == null) {
        throw new PodClaimException(name, "ResourceClaim " + ns + "/" + name + " does not exist");
      }
      return claim;
    } catch (KubernetesClientException e) {
      throw new PodClaimException(name, "reading ResourceClaim " + ns + "/" + name + " failed: " + e.getMessage());
    }
  }
}
