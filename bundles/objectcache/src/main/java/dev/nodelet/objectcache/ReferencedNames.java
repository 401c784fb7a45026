package dev.nodelet.objectcache;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EphemeralContainer;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeProjection;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The names of the Secrets and ConfigMaps a pod references, visited in the kubelet's order. Empty names are skipped;
 * nothing else is visited (not {@code cephfs.secretFile}, not persistent volume claims).
 */
public final class ReferencedNames {

  private ReferencedNames() {
  }

  /**
   * The Secrets a pod references: {@code spec.imagePullSecrets[].name}; for each container (init, regular, ephemeral)
   * {@code envFrom[].secretRef.name}, then {@code env[].valueFrom.secretKeyRef.name}; for each volume its
   * secret-bearing source (azureFile, cephfs, cinder, flexVolume, projected, rbd, secret, scaleIO, iscsi, storageos,
   * csi).
   *
   * @param pod the pod
   * @return the distinct names in visiting order; unmodifiable
   */
  public static Set<String> secrets(Pod pod) {
    Names names = new Names();
    PodSpec spec = pod.getSpec();
    if (spec == null) {
      return names.result();
    }
    for (LocalObjectReference pullSecret : list(spec.getImagePullSecrets())) {
      names.add(pullSecret.getName());
    }
    visitEnv(spec, (envFrom, env) -> {
      for (EnvFromSource source : envFrom) {
        if (source.getSecretRef() != null) {
          names.add(source.getSecretRef().getName());
        }
      }
      for (EnvVar var : env) {
        if (var.getValueFrom() != null && var.getValueFrom().getSecretKeyRef() != null) {
          names.add(var.getValueFrom().getSecretKeyRef().getName());
        }
      }
    });
    for (Volume volume : list(spec.getVolumes())) {
      visitSecretVolume(volume, names);
    }
    return names.result();
  }

  /**
   * The ConfigMaps a pod references: for each container (init, regular, ephemeral) {@code envFrom[].configMapRef.name},
   * then {@code env[].valueFrom.configMapKeyRef.name}; for each volume {@code projected.sources[].configMap.name} and
   * {@code configMap.name}.
   *
   * @param pod the pod
   * @return the distinct names in visiting order; unmodifiable
   */
  public static Set<String> configMaps(Pod pod) {
    Names names = new Names();
    PodSpec spec = pod.getSpec();
    if (spec == null) {
      return names.result();
    }
    visitEnv(spec, (envFrom, env) -> {
      for (EnvFromSource source : envFrom) {
        if (source.getConfigMapRef() != null) {
          names.add(source.getConfigMapRef().getName());
        }
      }
      for (EnvVar var : env) {
        if (var.getValueFrom() != null && var.getValueFrom().getConfigMapKeyRef() != null) {
          names.add(var.getValueFrom().getConfigMapKeyRef().getName());
        }
      }
    });
    for (Volume volume : list(spec.getVolumes())) {
      if (volume.getProjected() != null) {
        for (VolumeProjection source : list(volume.getProjected().getSources())) {
          if (source.getConfigMap() != null) {
            names.add(source.getConfigMap().getName());
          }
        }
      } else if (volume.getConfigMap() != null) {
        names.add(volume.getConfigMap().getName());
      }
    }
    return names.result();
  }

  /** Like the kubelet's type switch: a volume has one source, the first one set is the one visited. */
  private static void visitSecretVolume(Volume volume, Names names) {
    if (volume.getAzureFile() != null) {
      names.add(volume.getAzureFile().getSecretName());
    } else if (volume.getCephfs() != null) {
      names.add(volume.getCephfs().getSecretRef());
    } else if (volume.getCinder() != null) {
      names.add(volume.getCinder().getSecretRef());
    } else if (volume.getFlexVolume() != null) {
      names.add(volume.getFlexVolume().getSecretRef());
    } else if (volume.getProjected() != null) {
      for (VolumeProjection source : list(volume.getProjected().getSources())) {
        if (source.getSecret() != null) {
          names.add(source.getSecret().getName());
        }
      }
    } else if (volume.getRbd() != null) {
      names.add(volume.getRbd().getSecretRef());
    } else if (volume.getSecret() != null) {
      names.add(volume.getSecret().getSecretName());
    } else if (volume.getScaleIO() != null) {
      names.add(volume.getScaleIO().getSecretRef());
    } else if (volume.getIscsi() != null) {
      names.add(volume.getIscsi().getSecretRef());
    } else if (volume.getStorageos() != null) {
      names.add(volume.getStorageos().getSecretRef());
    } else if (volume.getCsi() != null) {
      names.add(volume.getCsi().getNodePublishSecretRef());
    }
  }

  private interface EnvVisitor {
    void visit(List<EnvFromSource> envFrom, List<EnvVar> env);
  }

  private static void visitEnv(PodSpec spec, EnvVisitor visitor) {
    Consumer<Container> container = c -> visitor.visit(list(c.getEnvFrom()), list(c.getEnv()));
    list(spec.getInitContainers()).forEach(container);
    list(spec.getContainers()).forEach(container);
    for (EphemeralContainer c : list(spec.getEphemeralContainers())) {
      visitor.visit(list(c.getEnvFrom()), list(c.getEnv()));
    }
  }

  private static <E> List<E> list(List<E> list) {
    return list == null ? List.of() : list;
  }

  private static final class Names {
    private final Set<String> names = new LinkedHashSet<>();

    void add(LocalObjectReference reference) {
      if (reference != null) {
        add(reference.getName());
      }
    }

    void add(String name) {
      if (name != null && !name.isEmpty()) {
        names.add(name);
      }
    }

    Set<String> result() {
      return Collections.unmodifiableSet(names);
    }
  }
}
