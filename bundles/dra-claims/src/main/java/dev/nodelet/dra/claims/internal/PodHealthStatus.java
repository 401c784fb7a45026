package dev.nodelet.dra.claims.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.PreparedDevice;
import dev.nodelet.dra.claims.internal.PodClaims.PodClaim;
import dev.nodelet.dra.claims.internal.PodClaims.PodClaimException;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ResourceHealth;
import io.fabric8.kubernetes.api.model.ResourceHealthBuilder;
import io.fabric8.kubernetes.api.model.ResourceStatus;
import io.fabric8.kubernetes.api.model.ResourceStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the health of each pod's devices into {@code status.containerStatuses[].allocatedResourcesStatus} (and
 * {@code initContainerStatuses}), with the kubelet's names: per container and {@code resources.claims[]} entry one
 * {@code claim:<entry>} or {@code claim:<entry>/<request>} status listing each device of the claim (request matched
 * on its base name) as {@code resourceID} (the first CDI ID, else {@code <driver>/<pool>/<device>}, de-duplicated)
 * and {@code Healthy}, {@code Unhealthy} or {@code Unknown}. Statuses are sorted, empty ones left out. Only
 * container statuses that exist are written, and only when they differ. Runs on the claim manager's thread.
 */
final class PodHealthStatus {

  private static final Logger LOG = LoggerFactory.getLogger(PodHealthStatus.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What was written to a pod, and its resourceVersions before and after, so an unchanged pod is not rewritten. */
  private record Written(Map<String, List<ResourceStatus>> statuses, String before, String after) {
  }

  private final KubernetesClient client;
  private final HealthTracker health;
  private final Map<String, Written> written = new HashMap<>();

  PodHealthStatus(KubernetesClient client, HealthTracker health) {
    this.client = client;
    this.health = health;
  }

  static String healthName(DeviceHealth.Health h) {
    return switch (h) {
      case HEALTHY -> "Healthy";
      case UNHEALTHY -> "Unhealthy";
      case UNKNOWN -> "Unknown";
    };
  }

  /** Brings the status of every pod that uses a cached claim up to date; forgets pods that are gone. */
  void sync(Collection<Pod> pods, Map<String, ClaimEntry> cache) {
    written.keySet().retainAll(pods.stream().map(p -> p.getMetadata().getUid()).toList());
    for (Pod pod : pods) {
      Map<String, List<ResourceStatus>> desired = desired(pod, cache);
      if (desired.isEmpty()) {
        continue;
      }
      String uid = pod.getMetadata().getUid();
      String rv = pod.getMetadata().getResourceVersion();
      Written last = written.get(uid);
      if (desired.equals(current(pod, desired.keySet())) || last != null && last.statuses().equals(desired)
          && (Objects.equals(rv, last.before()) || Objects.equals(rv, last.after()))) {
        continue;
      }
      try {
        Pod after = client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
            .subresource("status").patch(PatchContext.of(PatchType.JSON), patch(pod, desired));
        written.put(uid, new Written(desired, rv, after.getMetadata().getResourceVersion()));
        LOG.debug("Wrote device health of pod {}/{}", pod.getMetadata().getNamespace(), pod.getMetadata().getName());
      } catch (KubernetesClientException e) {
        LOG.warn("Writing the device health of pod {}/{} failed ({}); tried again at the next change",
            pod.getMetadata().getNamespace(), pod.getMetadata().getName(), e.getMessage());
      }
    }
  }

  /**
   * A JSON patch of the containers' statuses as the pod has them: each change is guarded by a test of the
   * container's name at that index, so a pod that changed meanwhile fails the patch (tried again at its update)
   * instead of writing to another container. Only {@code patch} on {@code pods/status} is needed, no read.
   */
  private static String patch(Pod pod, Map<String, List<ResourceStatus>> desired) {
    ArrayNode ops = JSON.createArrayNode();
    for (String list : List.of("initContainerStatuses", "containerStatuses")) {
      List<ContainerStatus> statuses = pod.getStatus() == null ? null : "containerStatuses".equals(list)
          ? pod.getStatus().getContainerStatuses() : pod.getStatus().getInitContainerStatuses();
      for (int i = 0; statuses != null && i < statuses.size(); i++) {
        ContainerStatus cs = statuses.get(i);
        List<ResourceStatus> want = desired.get(cs.getName());
        List<ResourceStatus> have = Optional.ofNullable(cs.getAllocatedResourcesStatus()).orElse(List.of());
        if (want == null || want.equals(have)) {
          continue;
        }
        String at = "/status/" + list + "/" + i;
        ops.addObject().put("op", "test").put("path", at + "/name").put("value", cs.getName());
        if (want.isEmpty()) {
          ops.addObject().put("op", "remove").put("path", at + "/allocatedResourcesStatus");
        } else {
          ops.addObject().put("op", "add").put("path", at + "/allocatedResourcesStatus").set("value",
              JSON.valueToTree(want));
        }
      }
    }
    return ops.toString();
  }

  private static Stream<ContainerStatus> statuses(Pod pod) {
    if (pod.getStatus() == null) {
      return Stream.empty();
    }
    return Stream.of(pod.getStatus().getInitContainerStatuses(), pod.getStatus().getContainerStatuses())
        .filter(Objects::nonNull).flatMap(List::stream);
  }

  /** The statuses the pod has for these containers; only containers with a status count. */
  private static Map<String, List<ResourceStatus>> current(Pod pod, Collection<String> containers) {
    Map<String, List<ResourceStatus>> out = new TreeMap<>();
    statuses(pod).filter(cs -> containers.contains(cs.getName())).forEach(cs -> out.put(cs.getName(),
        Optional.ofNullable(cs.getAllocatedResourcesStatus()).orElse(List.of())));
    return out;
  }

  /** Per container that has a status and uses a claim, its sorted statuses (possibly none). */
  Map<String, List<ResourceStatus>> desired(Pod pod, Map<String, ClaimEntry> cache) {
    List<String> withStatus = statuses(pod).map(ContainerStatus::getName).toList();
    Map<String, List<ResourceStatus>> out = new TreeMap<>();
    List<Container> containers = new ArrayList<>();
    containers.addAll(Optional.ofNullable(pod.getSpec().getInitContainers()).orElse(List.of()));
    containers.addAll(Optional.ofNullable(pod.getSpec().getContainers()).orElse(List.of()));
    for (Container c : containers) {
      if (c.getResources() == null || c.getResources().getClaims() == null || c.getResources().getClaims().isEmpty()
          || !withStatus.contains(c.getName())) {
        continue;
      }
      Map<String, ResourceStatus> byName = new TreeMap<>();
      for (io.fabric8.kubernetes.api.model.ResourceClaim use : c.getResources().getClaims()) {
        ClaimEntry entry;
        try {
          PodClaim pc = PodClaims.resolve(pod, use.getName());
          entry = pc == null ? null : cache.get(pod.getMetadata().getNamespace() + "/" + pc.name());
        } catch (PodClaimException e) {
          entry = null;
        }
        if (entry == null || !entry.usable()) {
          continue;
        }
        String request = use.getRequest();
        String name = "claim:" + use.getName() + (request == null || request.isEmpty() ? "" : "/" + request);
        Map<String, ResourceHealth> devices = new LinkedHashMap<>();
        entry.drivers.forEach((driver, list) -> {
          for (PreparedDevice d : list) {
            if (ClaimViews.matches(d, request)) {
              String id = d.cdiDeviceIds().isEmpty() ? driver + "/" + d.poolName() + "/" + d.deviceName()
                  : d.cdiDeviceIds().get(0);
              devices.putIfAbsent(id, new ResourceHealthBuilder().withResourceID(id)
                  .withHealth(healthName(health.health(driver, d.poolName(), d.deviceName()))).build());
            }
          }
        });
        if (!devices.isEmpty()) {
          List<ResourceHealth> sorted = new ArrayList<>(new TreeMap<>(devices).values());
          byName.put(name, new ResourceStatusBuilder().withName(name).withResources(sorted).build());
        }
      }
      out.put(c.getName(), List.copyOf(byName.values()));
    }
    return out;
  }
}
