package dev.nodelet.pods.internal;

import dev.nodelet.pods.PodBundles;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A pod's prepared devices: its containers wait in {@code ContainerCreating} until the claim manager prepared every
 * ResourceClaim of the pod (the reason as the message), then each container's configuration names the devices of
 * the claims it lists in {@code resources.claims}. A pod without claims is left alone. The claim manager's service
 * is held as a plain object, so that this bundle runs without the claim manager's bundle; only {@link ClaimDevices}
 * touches its types, and only for a pod with claims while the service is there.
 */
final class PodDevices {

  private static final Logger LOG = LoggerFactory.getLogger(PodDevices.class);
  static final String FAILED = "failed to prepare resource claim";
  static final String NOT_RUNNING = "waiting for the claim manager, which is not running (bundle nodelet-dra-claims"
      + "): the pod's resource claims cannot be prepared";

  private final Supplier<Object> claimStatus;
  private final DeviceAttributes attributes;
  private final Map<String, Map<String, List<Device>>> ready = new HashMap<>(); // executor only; by pod UID
  private final Map<String, String> problems = new HashMap<>(); // executor only; by pod UID, the last one logged
  private final DeviceServices services;

  /**
   * @param claimStatus the claim manager's {@code ClaimStatus} service, or null while there is none
   * @param attributes the drivers' device attributes
   */
  PodDevices(Supplier<Object> claimStatus, DeviceAttributes attributes) {
    this(claimStatus, attributes, DeviceServices.none());
  }

  /**
   * @param claimStatus the claim manager's {@code ClaimStatus} service, or null while there is none
   * @param attributes the drivers' device attributes
   * @param services where the containers' devices are registered as services
   */
  PodDevices(Supplier<Object> claimStatus, DeviceAttributes attributes, DeviceServices services) {
    this.claimStatus = claimStatus;
    this.attributes = attributes;
    this.services = services;
  }

  /** No claim manager at all: pods with claims wait. */
  static PodDevices none() {
    return new PodDevices(() -> null, DeviceAttributes.NONE);
  }

  /**
   * A device prepared for a container.
   *
   * @param claim the pod's claim entry ({@code spec.resourceClaims[].name})
   * @param claimName the ResourceClaim's name
   * @param request the request the container names, or null for all of the claim's devices
   * @param driver the driver
   * @param pool the pool
   * @param device the device's name in the pool
   * @param cdiDeviceIds the CDI device IDs
   * @param attributes the device's attributes as the driver's ResourceSlice names them; empty if unknown
   */
  record Device(String claim, String claimName, String request, String driver, String pool, String device,
      List<String> cdiDeviceIds, Map<String, Object> attributes) {

    String id() {
      return driver + "/" + pool + "/" + device;
    }
  }

  static boolean hasClaims(Pod pod) {
    return (pod.getSpec().getResourceClaims() != null && !pod.getSpec().getResourceClaims().isEmpty())
        || (pod.getStatus() != null && pod.getStatus().getExtendedResourceClaimStatus() != null);
  }

  /** @return whether a waiting message is one of a pod whose claims are not prepared yet: it is looked at soon */
  static boolean retrySoon(String message) {
    return message != null && (message.startsWith("waiting for") || message.startsWith(FAILED));
  }

  /**
   * Looks whether the pod's claims are prepared.
   *
   * @return true if they are (or it has none, or no container is left to start); else the containers not started
   *     yet wait with the reason
   */
  boolean prepare(PodState state) {
    if (!hasClaims(state.pod)) {
      return true;
    }
    Object status = claimStatus.get();
    ClaimDevices.Outcome outcome = status == null ? new ClaimDevices.Outcome(null, NOT_RUNNING)
        : ClaimDevices.resolve(state.pod, status, attributes);
    if (outcome.devices() != null) {
      if (problems.remove(state.uid) != null || !ready.containsKey(state.uid)) {
        LOG.info("Pod {}: resource claims prepared", state.key);
      }
      ready.put(state.uid, outcome.devices());
      return true;
    }
    if (!outcome.problem().equals(problems.put(state.uid, outcome.problem()))) {
      LOG.info("Pod {}: {}", state.key, outcome.problem());
    }
    boolean held = false;
    for (ContainerRun c : state.containers) {
      if (c.state == ContainerRun.State.WAITING && !c.startedOnce) {
        c.waiting("ContainerCreating", outcome.problem());
        held = true;
      }
    }
    // a pod whose containers run already (the claim manager restarting) keeps running with the devices it has
    return !held;
  }

  /**
   * @return the container's device properties: none for a pod without claims; a container that started keeps the
   *     devices it was given while the claim manager is away
   */
  Map<String, Object> properties(PodState state, ContainerRun c) {
    Map<String, List<Device>> devices = ready.get(state.uid);
    if (devices == null) {
      return Map.of();
    }
    return properties(devices.getOrDefault(c.name, List.of()));
  }

  static Map<String, Object> properties(List<Device> devices) {
    Map<String, Object> out = new LinkedHashMap<>();
    List<String> ids = new ArrayList<>();
    List<String> cdi = new ArrayList<>();
    for (int i = 0; i < devices.size(); i++) {
      Device d = devices.get(i);
      String prefix = PodBundles.DEVICE_PREFIX + i + ".";
      ids.add(d.id());
      cdi.addAll(d.cdiDeviceIds());
      out.put(prefix + "claim", d.claim());
      out.put(prefix + "claimName", d.claimName());
      if (d.request() != null) {
        out.put(prefix + "request", d.request());
      }
      out.put(prefix + "driver", d.driver());
      out.put(prefix + "pool", d.pool());
      out.put(prefix + "device", d.device());
      out.put(prefix + "cdiDeviceIds", d.cdiDeviceIds().toArray(String[]::new));
      d.attributes().forEach((name, value) -> out.put(prefix + "attribute." + name, value));
    }
    if (!devices.isEmpty()) {
      out.put(PodBundles.DEVICES, ids.toArray(String[]::new));
      out.put(PodBundles.CDI_DEVICE_IDS, cdi.toArray(String[]::new));
    }
    return out;
  }

  /**
   * Registers the container's devices as services ({@link DeviceServices}) as its configuration names them; a
   * container that started keeps its services while the claim manager is away, as it keeps its properties.
   */
  void publish(PodState state, ContainerRun c) {
    Map<String, List<Device>> devices = ready.get(state.uid);
    if (devices != null) {
      services.publish(state, c.name, c.location, devices.getOrDefault(c.name, List.of()));
    }
  }

  /** The container's bundle goes (a new image, a pod no longer known): its device services go. */
  void withdraw(String location) {
    services.withdraw(location);
  }

  /** The pod is gone: forgets its devices and withdraws their services. */
  void remove(PodState state) {
    ready.remove(state.uid);
    problems.remove(state.uid);
    for (ContainerRun c : state.containers) {
      services.withdraw(c.location);
    }
  }
}
