package dev.nodelet.pods.internal;

import dev.nodelet.pods.PodBundles;
import io.fabric8.kubernetes.api.model.Volume;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.osgi.framework.Bundle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a pod's containers receive: its ConfigMap, Secret and projected volumes, written with the atomic writer into
 * {@code <work>/pods/<uid>/volumes/<volume>} (the pod's folder is the node's alone), and per container one
 * configuration, bound to the container's bundle location, holding its resolved {@code env}/{@code envFrom}, the
 * pod's names, the folders of its volumes and the devices of its resource claims ({@link PodDevices}). Both are
 * delivered again on every sync of the pod, so that changes of the referenced objects reach running bundles;
 * unchanged content is not written again.
 */
final class PodDelivery {

  private static final Logger LOG = LoggerFactory.getLogger(PodDelivery.class);

  private final ObjectLookup lookup;
  private final ConfigDelivery configurations;
  private final Path work;
  private final Map<String, String> volumeProblems = new HashMap<>(); // executor only; by pod key
  // executor only; by container location: the names of the last resolved properties that came from Secrets
  private final Map<String, Set<String>> fromSecrets = new HashMap<>();
  private final PodDevices devices;

  PodDelivery(ObjectLookup lookup, ConfigDelivery configurations, Path work) {
    this(lookup, configurations, work, PodDevices.none());
  }

  PodDelivery(ObjectLookup lookup, ConfigDelivery configurations, Path work, PodDevices devices) {
    this.lookup = lookup;
    this.configurations = configurations;
    this.work = work;
    this.devices = devices;
  }

  Path podDir(PodState state) {
    return work.resolve("pods").resolve(state.uid);
  }

  Path volumeDir(PodState state, String volume) {
    return podDir(state).resolve("volumes").resolve(volume);
  }

  /**
   * Writes the pod's volumes.
   *
   * @return true when every volume is written; else the containers not started yet wait in
   *     {@code ContainerCreating} with the reason as the message
   */
  boolean prepare(PodState state, Instant now) {
    String problem = null;
    if (state.pod.getSpec().getVolumes() != null) {
      for (Volume volume : state.pod.getSpec().getVolumes()) {
        if (!VolumePayloads.handled(volume)) {
          continue;
        }
        try {
          Map<String, AtomicWriter.FileContent> payload = VolumePayloads.payload(state.pod, volume, lookup);
          ensurePodDir(state);
          if (AtomicWriter.write(volumeDir(state, volume.getName()), payload)) {
            LOG.debug("Pod {}: volume {} written", state.key, volume.getName());
          }
        } catch (ConfigError e) {
          problem = "MountVolume.SetUp failed for volume \"" + volume.getName() + "\": " + e.getMessage();
        } catch (IOException | IllegalArgumentException e) {
          problem = "MountVolume.SetUp failed for volume \"" + volume.getName() + "\": " + e.getMessage();
        }
      }
    }
    if (problem == null) {
      volumeProblems.remove(state.key);
      return devices.prepare(state); // the volumes first, then the resource claims
    }
    if (!problem.equals(volumeProblems.put(state.key, problem))) {
      LOG.info("Pod {}: {}", state.key, problem); // the kubelet's FailedMount; the message never holds content
    }
    for (ContainerRun c : state.containers) {
      if (c.state == ContainerRun.State.WAITING && !c.startedOnce) {
        c.waiting("ContainerCreating", problem);
      }
    }
    return false;
  }

  /** @return the pod's volume problem (the kubelet's FailedMount message), or null */
  String volumeProblem(String key) {
    return volumeProblems.get(key);
  }

  /**
   * Resolves the container's configuration.
   *
   * @return its properties; null if the container must wait (its state says why), unless it runs already: then it
   *     keeps its last configuration
   */
  Map<String, Object> properties(PodState state, ContainerRun c) {
    if (!state.readyToStart && !c.startedOnce) {
      return null;
    }
    for (ContainerRun other : state.containers) {
      if (other == c) {
        break;
      }
      if (sameArtifact(other.image, c.image)) {
        c.waiting("CreateContainerError", "container " + c.name + " names the same image as container "
            + other.name + " (" + c.image + "); a pod runs a bundle once");
        return null;
      }
    }
    try {
      Set<String> secretNames = new HashSet<>();
      Map<String, Object> properties = new LinkedHashMap<>(EnvResolver.resolve(state.pod, state.spec(c), lookup,
          state.hostIp, secretNames));
      Map<String, Object> own = new LinkedHashMap<>();
      own.put(PodBundles.POD_NAMESPACE, state.namespace());
      own.put(PodBundles.POD_NAME, state.name());
      own.put(PodBundles.POD_UID, state.uid);
      own.put(PodBundles.CONTAINER_NAME, c.name);
      own.put(PodBundles.VOLUMES_DIR, podDir(state).resolve("volumes").toString());
      if (state.pod.getSpec().getVolumes() != null) {
        for (Volume volume : state.pod.getSpec().getVolumes()) {
          if (VolumePayloads.handled(volume)) {
            own.put(PodBundles.VOLUME_PREFIX + volume.getName(), volumeDir(state, volume.getName()).toString());
          }
        }
      }
      own.putAll(devices.properties(state, c));
      properties.putAll(own);
      secretNames.removeAll(own.keySet()); // Nodelet's own names win over the environment's
      fromSecrets.put(c.location, Set.copyOf(secretNames));
      if ("CreateContainerConfigError".equals(c.reason) && c.state == ContainerRun.State.WAITING) {
        c.waiting("ContainerCreating", null);
      }
      return properties;
    } catch (ConfigError e) {
      if (c.state == ContainerRun.State.RUNNING) {
        LOG.info("Container {} keeps its last configuration: {}", c.location, e.getMessage());
        return null;
      }
      c.waiting(e.transientError ? "ContainerCreating" : "CreateContainerConfigError", e.getMessage());
      return null;
    }
  }

  /**
   * Hands the container's bundle its configuration.
   *
   * @return false if Config Admin failed (the container waits, unless it runs)
   */
  boolean deliver(PodState state, ContainerRun c, Bundle bundle, Map<String, Object> properties) {
    try {
      devices.publish(state, c); // before the bundle starts, as its configuration
      configurations.deliver(state.pid(c), bundle, properties, fromSecrets.getOrDefault(c.location,
          Set.of()));
      return true;
    } catch (IOException | RuntimeException e) {
      if (c.state != ContainerRun.State.RUNNING) {
        c.waiting("CreateContainerConfigError", "Configuration Admin failed: " + e.getMessage());
      }
      LOG.warn("Container {}: Configuration Admin failed: {}", c.location, e.toString());
      return false;
    }
  }

  /** Removes the pod's configurations and folder. */
  void remove(PodState state) {
    volumeProblems.remove(state.key);
    devices.remove(state);
    for (ContainerRun c : state.containers) {
      fromSecrets.remove(c.location);
      try {
        configurations.remove(c.location);
      } catch (IOException | RuntimeException e) {
        LOG.warn("Container {}: removing its configuration failed: {}", c.location, e.toString());
      }
    }
    try {
      AtomicWriter.deleteTree(podDir(state));
    } catch (IOException e) {
      LOG.warn("Pod {}: removing its folder {} failed: {}", state.key, podDir(state), e.toString());
    }
  }

  /** Removes the configurations bound to a location (a pod Nodelet no longer knows). */
  void removeConfigurations(String location) {
    fromSecrets.remove(location);
    devices.withdraw(location);
    try {
      configurations.remove(location);
    } catch (IOException | RuntimeException e) {
      LOG.warn("Removing the configurations of {} failed: {}", location, e.toString());
    }
  }

  /** Removes the folders of pods other than these. */
  void removeFoldersExcept(Set<String> uids) {
    Path pods = work.resolve("pods");
    if (!Files.isDirectory(pods)) {
      return;
    }
    try (var entries = Files.list(pods)) {
      for (Path dir : entries.toList()) {
        if (!uids.contains(dir.getFileName().toString())) {
          LOG.info("Removing the folder {} of a pod that is no longer on this node", dir);
          AtomicWriter.deleteTree(dir);
        }
      }
    } catch (IOException e) {
      LOG.warn("Removing the folders of pods no longer on this node failed: {}", e.toString());
    }
  }

  private void ensurePodDir(PodState state) throws IOException {
    Path dir = podDir(state);
    if (!Files.isDirectory(dir)) {
      Files.createDirectories(dir.getParent());
      Files.setPosixFilePermissions(dir.getParent(), PosixFilePermissions.fromString("rwx------"));
      Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    }
  }

  static boolean sameArtifact(String a, String b) {
    try {
      return ImageRef.parse(a).artifact().equals(ImageRef.parse(b).artifact());
    } catch (IllegalArgumentException e) {
      return a.equals(b);
    }
  }
}
