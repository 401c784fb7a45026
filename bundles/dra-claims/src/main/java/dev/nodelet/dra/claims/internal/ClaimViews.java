package dev.nodelet.dra.claims.internal;

import dev.nodelet.dra.PreparedDevice;
import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ContainerDevices;
import dev.nodelet.dra.claims.internal.PodClaims.PodClaim;
import dev.nodelet.dra.claims.internal.PodClaims.PodClaimException;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerExtendedResourceRequest;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** The snapshots the claim manager answers with: the claims, and the CDI device IDs per container. */
final class ClaimViews {

  private ClaimViews() {
  }

  /** The claims of the cache, and the failures of claims not cached yet, ordered by namespace and name. */
  static List<ClaimInfo> claims(Collection<ClaimEntry> cache, Failures failures, Collection<Pod> activePods) {
    Map<String, String> podNames = new HashMap<>();
    activePods.forEach(p -> podNames.put(p.getMetadata().getUid(),
        p.getMetadata().getNamespace() + "/" + p.getMetadata().getName()));
    Map<String, ClaimInfo> view = new TreeMap<>();
    for (ClaimEntry e : cache) {
      Failures.Failure f = failures.get(e.key());
      ClaimInfo.State state = e.unpreparing ? ClaimInfo.State.UNPREPARING
          : f != null ? ClaimInfo.State.FAILED
          : e.usable() ? ClaimInfo.State.PREPARED : ClaimInfo.State.PREPARING;
      Map<String, List<PreparedDevice>> devices = e.usable() || e.unpreparing ? Map.copyOf(e.drivers) : Map.of();
      view.put(e.key(), new ClaimInfo(e.namespace, e.name, e.uid, state,
          e.podUids.stream().map(uid -> podNames.getOrDefault(uid, uid)).toList(), devices,
          f == null ? null : f.message(), f == null ? null : f.nextRetry()));
    }
    for (Failures.Failure f : failures.all()) {
      view.putIfAbsent(f.key(), new ClaimInfo(f.namespace(), f.name(), "", ClaimInfo.State.FAILED,
          f.podUid() == null ? List.of() : List.of(podNames.getOrDefault(f.podUid(), f.podUid())), Map.of(),
          f.message(), f.nextRetry()));
    }
    return List.copyOf(view.values());
  }

  /**
   * Per container, one entry per {@code resources.claims[]} entry and, for a claim of extended resources, per
   * request mapping of the container; the CDI IDs of the matching devices of a prepared claim.
   */
  static List<ContainerDevices> containers(List<ClaimInfo> claims, Collection<Pod> activePods, FeatureGates gates) {
    Map<String, ClaimInfo> byKey = new HashMap<>();
    claims.forEach(c -> byKey.put(c.namespace() + "/" + c.name(), c));
    List<ContainerDevices> out = new ArrayList<>();
    List<Pod> pods = new ArrayList<>(activePods);
    pods.sort(Comparator.comparing((Pod p) -> p.getMetadata().getNamespace())
        .thenComparing(p -> p.getMetadata().getName()));
    for (Pod pod : pods) {
      String ns = pod.getMetadata().getNamespace();
      String extended = gates.enabled(FeatureGates.EXTENDED_RESOURCE) ? PodClaims.extendedClaimName(pod) : null;
      List<Container> containers = new ArrayList<>();
      containers.addAll(Optional.ofNullable(pod.getSpec().getInitContainers()).orElse(List.of()));
      containers.addAll(Optional.ofNullable(pod.getSpec().getContainers()).orElse(List.of()));
      for (Container c : containers) {
        if (c.getResources() != null && c.getResources().getClaims() != null) {
          for (io.fabric8.kubernetes.api.model.ResourceClaim use : c.getResources().getClaims()) {
            String claimName;
            try {
              PodClaim pc = PodClaims.resolve(pod, use.getName());
              claimName = pc == null ? null : pc.name();
            } catch (PodClaimException e) {
              out.add(new ContainerDevices(ns, pod.getMetadata().getName(), c.getName(), use.getName(),
                  use.getRequest(), List.of(), e.getMessage()));
              continue;
            }
            out.add(claimName == null // the template produced no claim: nothing to prepare, as the kubelet skips it
                ? new ContainerDevices(ns, pod.getMetadata().getName(), c.getName(), use.getName(), use.getRequest(),
                    List.of())
                : entry(pod, c, use.getName(), use.getRequest(), ns + "/" + claimName,
                    byKey.get(ns + "/" + claimName)));
          }
        }
        if (extended != null) {
          for (ContainerExtendedResourceRequest m : PodClaims.extendedMappings(pod)) {
            if (c.getName().equals(m.getContainerName())) {
              out.add(entry(pod, c, extended, m.getRequestName(), ns + "/" + extended, byKey.get(ns + "/" + extended)));
            }
          }
        }
      }
    }
    return out;
  }

  /** The devices of a resolved claim for one entry, or why there are none: the kubelet's GetResources errors. */
  private static ContainerDevices entry(Pod pod, Container c, String podClaim, String request, String key,
      ClaimInfo info) {
    String error = null;
    if (info == null) {
      error = "ResourceClaim " + key + " is not prepared: the claim manager has no record of it (the pod was not"
          + " handed to it, or not synced yet)";
    } else if (info.state() != ClaimInfo.State.PREPARED) {
      error = "ResourceClaim " + key + " is not prepared (" + info.state() + ")"
          + (info.error() == null ? "" : ": " + info.error());
    }
    return new ContainerDevices(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), c.getName(), podClaim,
        request, error == null ? ids(info, request) : List.of(), error);
  }

  private static List<String> ids(ClaimInfo info, String request) {
    List<String> ids = new ArrayList<>();
    if (info != null && info.state() == ClaimInfo.State.PREPARED) {
      info.devices().values().forEach(devices -> devices.stream().filter(d -> matches(d, request))
          .forEach(d -> ids.addAll(d.cdiDeviceIds())));
    }
    return ids;
  }

  /** The devices of a claim that a container's request gets; drivers report base request names. */
  static boolean matches(PreparedDevice d, String request) {
    if (request == null || request.isEmpty() || d.requestNames().isEmpty()) {
      return true;
    }
    String base = request.contains("/") ? request.substring(0, request.indexOf('/')) : request;
    return d.requestNames().stream().anyMatch(r -> r.equals(request) || r.equals(base));
  }
}
