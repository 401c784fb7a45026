package dev.nodelet.pods.internal;

import dev.nodelet.dra.PreparedDevice;
import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimStatus;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.ResourceClaim;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Reads the claim manager's view for one pod: whether each of its ResourceClaims is prepared for it (else why not),
 * and the devices each container gets, as the kubelet picks a container's CDI IDs: the devices of the claims the
 * container lists in {@code resources.claims}, those of the named request only when it names one (drivers report
 * base request names).
 */
final class ClaimDevices {

  private ClaimDevices() {
  }

  /** Either the devices per container name, or why the pod must wait. */
  record Outcome(Map<String, List<PodDevices.Device>> devices, String problem) {
  }

  static Outcome resolve(Pod pod, Object service, DeviceAttributes attributes) {
    ClaimStatus status = (ClaimStatus) service;
    String namespace = pod.getMetadata().getNamespace();
    String podKey = namespace + "/" + pod.getMetadata().getName();
    Map<String, ClaimInfo> byName = new HashMap<>();
    List<ClaimInfo> failedForPod = new ArrayList<>();
    for (ClaimInfo info : status.claims()) {
      if (info.namespace().equals(namespace)) {
        byName.put(info.name(), info);
      }
      if (info.state() == ClaimInfo.State.FAILED && info.pods().contains(podKey)) {
        failedForPod.add(info);
      }
    }
    Map<String, String> entries = new LinkedHashMap<>(); // pod claim entry to ResourceClaim name
    for (PodResourceClaim entry : Optional.ofNullable(pod.getSpec().getResourceClaims()).orElse(List.of())) {
      String name = claimName(pod, entry);
      if (name == null) {
        // no claim was made for the entry, or it is not made yet: the claim manager's error says which
        ClaimInfo failure = failedForPod.stream().filter(f -> f.name().endsWith("claim " + entry.getName()))
            .findFirst().orElse(null);
        if (failure != null) {
          return new Outcome(null, PodDevices.FAILED + " \"" + entry.getName() + "\": " + failure.error());
        }
        if (entry.getResourceClaimTemplateName() != null && !hasStatus(pod, entry.getName())) {
          return new Outcome(null, "waiting for the ResourceClaim of entry \"" + entry.getName()
              + "\" to be created from template " + entry.getResourceClaimTemplateName());
        }
        continue; // a template that made no claim: nothing to prepare
      }
      entries.put(entry.getName(), name);
    }
    String extended = pod.getStatus() == null || pod.getStatus().getExtendedResourceClaimStatus() == null ? null
        : pod.getStatus().getExtendedResourceClaimStatus().getResourceClaimName();
    List<String> names = new ArrayList<>(entries.values());
    if (extended != null) {
      names.add(extended);
    }
    for (String name : names) {
      ClaimInfo info = byName.get(name);
      String entry = entries.entrySet().stream().filter(e -> e.getValue().equals(name)).map(Map.Entry::getKey)
          .findFirst().orElse(name);
      String which = "\"" + entry + "\" (ResourceClaim " + namespace + "/" + name + ")";
      if (info != null && info.state() == ClaimInfo.State.FAILED) {
        return new Outcome(null, PodDevices.FAILED + " " + which + ": " + info.error());
      }
      if (info == null || info.state() != ClaimInfo.State.PREPARED || !info.pods().contains(podKey)) {
        return new Outcome(null, "waiting for resource claim " + which + " to be prepared");
      }
    }
    Map<String, List<PodDevices.Device>> devices = new TreeMap<>();
    List<Container> containers = new ArrayList<>();
    containers.addAll(Optional.ofNullable(pod.getSpec().getInitContainers()).orElse(List.of()));
    containers.addAll(pod.getSpec().getContainers());
    for (Container c : containers) {
      List<PodDevices.Device> own = new ArrayList<>();
      if (c.getResources() != null && c.getResources().getClaims() != null) {
        for (ResourceClaim use : c.getResources().getClaims()) {
          String name = entries.get(use.getName());
          ClaimInfo info = name == null ? null : byName.get(name);
          if (info == null) {
            continue;
          }
          info.devices().entrySet().stream().sorted(Map.Entry.comparingByKey()).forEach(e -> {
            for (PreparedDevice d : e.getValue()) {
              if (matches(d, use.getRequest())) {
                own.add(new PodDevices.Device(use.getName(), name, use.getRequest(), e.getKey(), d.poolName(),
                    d.deviceName(), d.cdiDeviceIds(), attributes.of(e.getKey(), d.poolName(), d.deviceName())));
              }
            }
          });
        }
      }
      devices.put(c.getName(), List.copyOf(own));
    }
    return new Outcome(devices, null);
  }

  private static String claimName(Pod pod, PodResourceClaim entry) {
    if (entry.getResourceClaimName() != null) {
      return entry.getResourceClaimName();
    }
    List<PodResourceClaimStatus> statuses = pod.getStatus() == null ? null
        : pod.getStatus().getResourceClaimStatuses();
    return statuses == null ? null : statuses.stream().filter(s -> entry.getName().equals(s.getName()))
        .map(PodResourceClaimStatus::getResourceClaimName).filter(n -> n != null).findFirst().orElse(null);
  }

  private static boolean hasStatus(Pod pod, String entry) {
    return pod.getStatus() != null && pod.getStatus().getResourceClaimStatuses() != null
        && pod.getStatus().getResourceClaimStatuses().stream().anyMatch(s -> entry.equals(s.getName()));
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
