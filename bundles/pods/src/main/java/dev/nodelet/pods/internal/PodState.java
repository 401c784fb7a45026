package dev.nodelet.pods.internal;

import dev.nodelet.pods.PodBundles;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeProjection;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;

/** One pod as Nodelet runs it. Used on the pods' executor only. */
final class PodState {

  final String key;
  final String uid;
  Pod pod;
  final List<ContainerRun> containers = new ArrayList<>();
  final Instant startTime;
  Admission.Rejection rejection; // null: admitted
  PodStatus lastWritten; // the last status handed to the writer (or read from the API server); null: none
  boolean readyToStart;
  String hostIp; // the node's InternalIP for status.hostIP references; null if unknown
  boolean deleted; // its containers stopped for the deletion; the pod object is released next
  final Set<String> configMaps = new HashSet<>();
  final Set<String> secrets = new HashSet<>();
  ScheduledFuture<?> timer;
  boolean releasing; // its deletion waits for its last status to be written

  PodState(String key, Pod pod, Instant now) {
    this.key = key;
    this.uid = pod.getMetadata().getUid();
    this.pod = pod;
    Instant started = pod.getStatus() == null ? null : Times.parse(pod.getStatus().getStartTime());
    this.startTime = started == null ? now : started;
    for (Container container : pod.getSpec().getContainers()) {
      containers.add(new ContainerRun(container.getName(), container.getImage(),
          PodBundles.location(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), container.getName())));
    }
    references(pod);
  }

  String namespace() {
    return pod.getMetadata().getNamespace();
  }

  String name() {
    return pod.getMetadata().getName();
  }

  Container spec(ContainerRun run) {
    return pod.getSpec().getContainers().stream().filter(c -> c.getName().equals(run.name)).findFirst()
        .orElseThrow();
  }

  String restartPolicy() {
    String policy = pod.getSpec().getRestartPolicy();
    return policy == null || policy.isEmpty() ? "Always" : policy;
  }

  /** @return the PID the container's configuration goes under: the pod's annotation, else the default */
  String pid(ContainerRun run) {
    Map<String, String> annotations = pod.getMetadata().getAnnotations();
    String chosen = annotations == null ? null : annotations.get(PodBundles.PID_ANNOTATION_PREFIX + run.name);
    return chosen == null || chosen.isBlank() ? PodBundles.DEFAULT_PID_PREFIX + run.name : chosen.trim();
  }

  /** Records which ConfigMaps and Secrets the pod references, so that their changes reach it. */
  void references(Pod next) {
    configMaps.clear();
    secrets.clear();
    for (Container container : next.getSpec().getContainers()) {
      if (container.getEnvFrom() != null) {
        for (EnvFromSource from : container.getEnvFrom()) {
          if (from.getConfigMapRef() != null) {
            configMaps.add(from.getConfigMapRef().getName());
          }
          if (from.getSecretRef() != null) {
            secrets.add(from.getSecretRef().getName());
          }
        }
      }
      if (container.getEnv() != null) {
        for (EnvVar variable : container.getEnv()) {
          if (variable.getValueFrom() != null && variable.getValueFrom().getConfigMapKeyRef() != null) {
            configMaps.add(variable.getValueFrom().getConfigMapKeyRef().getName());
          }
          if (variable.getValueFrom() != null && variable.getValueFrom().getSecretKeyRef() != null) {
            secrets.add(variable.getValueFrom().getSecretKeyRef().getName());
          }
        }
      }
    }
    if (next.getSpec().getVolumes() != null) {
      for (Volume volume : next.getSpec().getVolumes()) {
        if (volume.getConfigMap() != null) {
          configMaps.add(volume.getConfigMap().getName());
        }
        if (volume.getSecret() != null) {
          secrets.add(volume.getSecret().getSecretName());
        }
        if (volume.getProjected() != null && volume.getProjected().getSources() != null) {
          for (VolumeProjection source : volume.getProjected().getSources()) {
            if (source.getConfigMap() != null) {
              configMaps.add(source.getConfigMap().getName());
            }
            if (source.getSecret() != null) {
              secrets.add(source.getSecret().getName());
            }
          }
        }
      }
    }
  }

  /** @return true while the pod counts against the node's capacity */
  boolean active() {
    if (rejection != null || deleted) {
      return false;
    }
    String phase = lastWritten == null ? null : lastWritten.getPhase();
    return !"Succeeded".equals(phase) && !"Failed".equals(phase);
  }
}
