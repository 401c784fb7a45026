package dev.nodelet.dra.claims.internal;

import io.fabric8.kubernetes.api.model.ContainerExtendedResourceRequest;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodExtendedResourceClaimStatus;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/** Which ResourceClaims a pod uses: its {@code spec.resourceClaims} and, with DRAExtendedResource, its extended one. */
final class PodClaims {

  private PodClaims() {
  }

  /**
   * A pod's claim resolved to a ResourceClaim.
   *
   * @param entry the {@code spec.resourceClaims[].name}, or null for the claim of extended resources
   * @param name the ResourceClaim's name
   * @param fromTemplate made from a template, so it must be controlled by the pod
   */
  record PodClaim(String entry, String name, boolean fromTemplate) {
  }

  /** A claim of the pod cannot be used (yet); {@code claimName} is what the claim view shows for it. */
  static final class PodClaimException extends Exception {
    private static final long serialVersionUID = 1L;
    final String claimName;

    PodClaimException(String claimName, String message) {
      super(message);
      this.claimName = claimName;
    }
  }

  /** Every claim the pod needs prepared, spec entries first; entries that need no claim are left out. */
  static List<PodClaim> of(Pod pod, FeatureGates gates) throws PodClaimException {
    List<PodClaim> out = new ArrayList<>();
    for (PodResourceClaim entry : Optional.ofNullable(pod.getSpec().getResourceClaims()).orElse(List.of())) {
      PodClaim pc = resolve(pod, entry.getName());
      if (pc != null) {
        out.add(pc);
      }
    }
    String extended = gates.enabled(FeatureGates.EXTENDED_RESOURCE) ? extendedClaimName(pod) : null;
    if (extended != null && out.stream().noneMatch(pc -> pc.name().equals(extended))) {
      out.add(new PodClaim(null, extended, false)); // the scheduler made it; the kubelet checks no owner
    }
    return out;
  }

  /** The claim name of a pod's claim entry; null when the entry needs no claim (a template produced none). */
  static PodClaim resolve(Pod pod, String entryName) throws PodClaimException {
    PodResourceClaim entry = Optional.ofNullable(pod.getSpec().getResourceClaims()).orElse(List.of()).stream()
        .filter(e -> entryName.equals(e.getName())).findFirst().orElse(null);
    String label = "pod " + pod.getMetadata().getName() + ", claim " + entryName;
    if (entry == null) {
      throw new PodClaimException(label, "pod " + pod.getMetadata().getName() + " has no resourceClaims entry "
          + entryName);
    }
    if (entry.getResourceClaimName() != null) {
      return new PodClaim(entryName, entry.getResourceClaimName(), false);
    }
    if (entry.getResourceClaimTemplateName() == null) {
      throw new PodClaimException(label, "resourceClaims entry " + entryName + " of pod "
          + pod.getMetadata().getName() + " names neither resourceClaimName nor resourceClaimTemplateName");
    }
    List<PodResourceClaimStatus> statuses = pod.getStatus() == null ? null
        : pod.getStatus().getResourceClaimStatuses();
    PodResourceClaimStatus status = statuses == null ? null
        : statuses.stream().filter(s -> entryName.equals(s.getName())).findFirst().orElse(null);
    if (status == null) {
      throw new PodClaimException(label, "ResourceClaim not created yet for entry " + entryName + " of pod "
          + pod.getMetadata().getName());
    }
    return status.getResourceClaimName() == null ? null
        : new PodClaim(entryName, status.getResourceClaimName(), true);
  }

  /** {@code status.extendedResourceClaimStatus.resourceClaimName}, or null. */
  static String extendedClaimName(Pod pod) {
    PodExtendedResourceClaimStatus s = pod.getStatus() == null ? null
        : pod.getStatus().getExtendedResourceClaimStatus();
    return s == null || s.getResourceClaimName() == null || s.getResourceClaimName().isEmpty() ? null
        : s.getResourceClaimName();
  }

  /** The request mappings of the extended resource claim; empty without one. */
  static List<ContainerExtendedResourceRequest> extendedMappings(Pod pod) {
    PodExtendedResourceClaimStatus s = pod.getStatus() == null ? null
        : pod.getStatus().getExtendedResourceClaimStatus();
    return s == null || s.getRequestMappings() == null ? List.of() : s.getRequestMappings();
  }

  /**
   * {@code spec.schedulingGroup.podGroupName} (Kubernetes 1.36), or null; read from the additional properties as the
   * fabric8 7.5.2 model has no such field.
   */
  static String podGroup(Pod pod) {
    Object group = pod.getSpec().getAdditionalProperties().get("schedulingGroup");
    Object name = group instanceof Map<?, ?> m ? m.get("podGroupName") : null;
    return name instanceof String s && !s.isEmpty() ? s : null;
  }

  /** Not in a terminal phase and not being deleted. */
  static boolean isActive(Pod pod) {
    String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    return pod.getMetadata().getDeletionTimestamp() == null && !"Succeeded".equals(phase) && !"Failed".equals(phase);
  }

  /** A container of the pod runs or ran: the pod is past its start. */
  static boolean started(Pod pod) {
    if (pod.getStatus() == null) {
      return false;
    }
    if ("Running".equals(pod.getStatus().getPhase())) {
      return true;
    }
    return Stream.of(pod.getStatus().getContainerStatuses(), pod.getStatus().getInitContainerStatuses())
        .filter(java.util.Objects::nonNull).flatMap(List::stream).map(ContainerStatus::getState)
        .anyMatch(s -> s != null && (s.getRunning() != null || s.getTerminated() != null));
  }
}
