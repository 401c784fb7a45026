package dev.nodelet.cache.core;

import dev.nodelet.cache.core.internal.Quote;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarSource;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeProjection;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The names of the Secrets and ConfigMaps a pod references, visited in the kubelet's order. Empty names are skipped;
 * nothing else is visited (not {@code cephfs.secretFile}, not persistent volume claims).
 *
 * <p>Bad input is skipped, never thrown: a {@code null} list element (container, volume, projected source, env
 * entry, pull secret), a name that is not a valid object name (a lower case RFC 1123 subdomain of at most 253
 * characters), and every reference of a pod whose namespace is not a valid namespace name. The valid references of
 * the same pod are still returned; each skipped one is logged as a warning that names the pod and the field, e.g.
 * {@code spec.volumes[2].secret.secretName}.
 */
public final class ReferencedNames {

  private static final Logger LOG = LoggerFactory.getLogger(ReferencedNames.class);

  private static final int MAX_NAME_LENGTH = 253;
  private static final int MAX_NAMESPACE_LENGTH = 63;
  /** How much of a bad name a message quotes. */
  private static final int MAX_QUOTED_LENGTH = 64;
  /** How many problems of one pod one log line lists. */
  private static final int MAX_LOGGED_PROBLEMS = 10;

  private ReferencedNames() {
  }

  /**
   * The Secrets a pod references: {@code spec.imagePullSecrets[].name}; for each container (init, regular, ephemeral)
   * {@code envFrom[].secretRef.name}, then {@code env[].valueFrom.secretKeyRef.name}; for each volume its
   * secret-bearing source (azureFile, cephfs, cinder, flexVolume, projected, rbd, secret, scaleIO, iscsi, storageos,
   * csi). Invalid references are skipped and logged (see the class description).
   *
   * @param pod the pod
   * @return the distinct valid names in visiting order; unmodifiable
   */
  public static Set<String> secrets(Pod pod) {
    return logged(pod, problems -> secrets(pod, problems));
  }

  /**
   * The ConfigMaps a pod references: for each container (init, regular, ephemeral) {@code envFrom[].configMapRef.name},
   * then {@code env[].valueFrom.configMapKeyRef.name}; for each volume {@code projected.sources[].configMap.name} and
   * {@code configMap.name}. Invalid references are skipped and logged (see the class description).
   *
   * @param pod the pod
   * @return the distinct valid names in visiting order; unmodifiable
   */
  public static Set<String> configMaps(Pod pod) {
    return logged(pod, problems -> configMaps(pod, problems));
  }

  /** {@link #secrets(Pod)}, telling each skipped reference to {@code problems} instead of the log. */
  static Set<String> secrets(Pod pod, Consumer<String> problems) {
    Names names = new Names("Secret", problems);
    PodSpec spec = spec(pod, problems);
    if (spec == null) {
      return names.result();
    }
    each(spec.getImagePullSecrets(), () -> "spec.imagePullSecrets", names,
        (pullSecret, at) -> names.add(pullSecret.getName(), () -> at.get() + ".name"));
    visitEnv(spec, names, (source, at) -> {
      if (source.getSecretRef() != null) {
        names.add(source.getSecretRef().getName(), () -> at.get() + ".secretRef.name");
      }
    }, (valueFrom, at) -> {
      if (valueFrom.getSecretKeyRef() != null) {
        names.add(valueFrom.getSecretKeyRef().getName(), () -> at.get() + ".valueFrom.secretKeyRef.name");
      }
    });
    each(spec.getVolumes(), () -> "spec.volumes", names, (volume, at) -> visitSecretVolume(volume, at, names));
    return names.result();
  }

  /** {@link #configMaps(Pod)}, telling each skipped reference to {@code problems} instead of the log. */
  static Set<String> configMaps(Pod pod, Consumer<String> problems) {
    Names names = new Names("ConfigMap", problems);
    PodSpec spec = spec(pod, problems);
    if (spec == null) {
      return names.result();
    }
    visitEnv(spec, names, (source, at) -> {
      if (source.getConfigMapRef() != null) {
        names.add(source.getConfigMapRef().getName(), () -> at.get() + ".configMapRef.name");
      }
    }, (valueFrom, at) -> {
      if (valueFrom.getConfigMapKeyRef() != null) {
        names.add(valueFrom.getConfigMapKeyRef().getName(), () -> at.get() + ".valueFrom.configMapKeyRef.name");
      }
    });
    each(spec.getVolumes(), () -> "spec.volumes", names, (volume, at) -> {
      if (volume.getProjected() != null) {
        visitProjections(volume, at, names, (projection, source) -> {
          if (projection.getConfigMap() != null) {
            names.add(projection.getConfigMap().getName(), () -> source.get() + ".configMap.name");
          }
        });
      } else if (volume.getConfigMap() != null) {
        names.add(volume.getConfigMap().getName(), () -> at.get() + ".configMap.name");
      }
    });
    return names.result();
  }

  /** Like the kubelet's type switch: a volume has one source, the first one set is the one visited. */
  private static void visitSecretVolume(Volume volume, Supplier<String> at, Names names) {
    if (volume.getAzureFile() != null) {
      names.add(volume.getAzureFile().getSecretName(), () -> at.get() + ".azureFile.secretName");
    } else if (volume.getCephfs() != null) {
      names.addRef(volume.getCephfs().getSecretRef(), () -> at.get() + ".cephfs.secretRef");
    } else if (volume.getCinder() != null) {
      names.addRef(volume.getCinder().getSecretRef(), () -> at.get() + ".cinder.secretRef");
    } else if (volume.getFlexVolume() != null) {
      names.addRef(volume.getFlexVolume().getSecretRef(), () -> at.get() + ".flexVolume.secretRef");
    } else if (volume.getProjected() != null) {
      visitProjections(volume, at, names, (projection, source) -> {
        if (projection.getSecret() != null) {
          names.add(projection.getSecret().getName(), () -> source.get() + ".secret.name");
        }
      });
    } else if (volume.getRbd() != null) {
      names.addRef(volume.getRbd().getSecretRef(), () -> at.get() + ".rbd.secretRef");
    } else if (volume.getSecret() != null) {
      names.add(volume.getSecret().getSecretName(), () -> at.get() + ".secret.secretName");
    } else if (volume.getScaleIO() != null) {
      names.addRef(volume.getScaleIO().getSecretRef(), () -> at.get() + ".scaleIO.secretRef");
    } else if (volume.getIscsi() != null) {
      names.addRef(volume.getIscsi().getSecretRef(), () -> at.get() + ".iscsi.secretRef");
    } else if (volume.getStorageos() != null) {
      names.addRef(volume.getStorageos().getSecretRef(), () -> at.get() + ".storageos.secretRef");
    } else if (volume.getCsi() != null) {
      names.addRef(volume.getCsi().getNodePublishSecretRef(), () -> at.get() + ".csi.nodePublishSecretRef");
    }
  }

  private static void visitProjections(Volume volume, Supplier<String> at, Names names,
      BiConsumer<VolumeProjection, Supplier<String>> visit) {
    each(volume.getProjected().getSources(), () -> at.get() + ".projected.sources", names, visit);
  }

  /**
   * Visits the env sources of every container (init, regular, ephemeral): each {@code envFrom[]} entry, and the
   * {@code valueFrom} of each {@code env[]} entry that has one; each with its field path.
   */
  private static void visitEnv(PodSpec spec, Names names, BiConsumer<EnvFromSource, Supplier<String>> envFrom,
      BiConsumer<EnvVarSource, Supplier<String>> valueFrom) {
    each(spec.getInitContainers(), () -> "spec.initContainers", names,
        (c, at) -> visitContainerEnv(c.getEnvFrom(), c.getEnv(), at, names, envFrom, valueFrom));
    each(spec.getContainers(), () -> "spec.containers", names,
        (c, at) -> visitContainerEnv(c.getEnvFrom(), c.getEnv(), at, names, envFrom, valueFrom));
    each(spec.getEphemeralContainers(), () -> "spec.ephemeralContainers", names,
        (c, at) -> visitContainerEnv(c.getEnvFrom(), c.getEnv(), at, names, envFrom, valueFrom));
  }

  private static void visitContainerEnv(List<EnvFromSource> sources, List<EnvVar> vars, Supplier<String> container,
      Names names, BiConsumer<EnvFromSource, Supplier<String>> envFrom,
      BiConsumer<EnvVarSource, Supplier<String>> valueFrom) {
    each(sources, () -> container.get() + ".envFrom", names, envFrom);
    each(vars, () -> container.get() + ".env", names, (var, at) -> {
      if (var.getValueFrom() != null) {
        valueFrom.accept(var.getValueFrom(), at);
      }
    });
  }

  /** Visits each element of a list field with its path, e.g. {@code spec.volumes[2]}; a null element is a problem. */
  private static <E> void each(List<E> elements, Supplier<String> field, Names names,
      BiConsumer<? super E, Supplier<String>> visit) {
    List<E> all = list(elements);
    for (int i = 0; i < all.size(); i++) {
      int index = i;
      Supplier<String> at = () -> field.get() + "[" + index + "]";
      E element = all.get(i);
      if (element == null) {
        names.problem(() -> at.get() + " is null");
      } else {
        visit.accept(element, at);
      }
    }
  }

  /** The spec to visit, or {@code null} if there is none or the pod's namespace cannot hold objects. */
  private static PodSpec spec(Pod pod, Consumer<String> problems) {
    ObjectMeta metadata = Objects.requireNonNull(pod, "pod").getMetadata();
    String namespace = metadata == null ? null : metadata.getNamespace();
    // a missing namespace is the manager's to reject; a present one must be able to hold objects
    if (namespace != null && !namespace.isEmpty()
        && (namespace.length() > MAX_NAMESPACE_LENGTH || !isDns1123Label(namespace, 0, namespace.length()))) {
      problems.accept("metadata.namespace " + quoted(namespace) + " is not a valid namespace name (a lower case "
          + "RFC 1123 label of at most " + MAX_NAMESPACE_LENGTH + " characters); every reference of the pod is "
          + "skipped");
      return null;
    }
    return pod.getSpec();
  }

  /**
   * IsDNS1123Subdomain ({@code [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*}), the rule of
   * ValidateSecretName and ValidateConfigMapName. Checked by hand: a regex allocates a matcher and its loop state
   * per name, on every pod registration.
   */
  static boolean isDns1123Subdomain(String name) {
    int labelStart = 0;
    for (int i = 0; i <= name.length(); i++) {
      if (i == name.length() || name.charAt(i) == '.') {
        if (!isDns1123Label(name, labelStart, i)) {
          return false;
        }
        labelStart = i + 1;
      }
    }
    return true;
  }

  /** IsDNS1123Label ({@code [a-z0-9]([-a-z0-9]*[a-z0-9])?}), the rule of namespace names, on {@code [from, to)}. */
  static boolean isDns1123Label(String name, int from, int to) {
    if (from >= to || !isLowerAlphanumeric(name.charAt(from)) || !isLowerAlphanumeric(name.charAt(to - 1))) {
      return false;
    }
    for (int i = from + 1; i < to - 1; i++) {
      char c = name.charAt(i);
      if (c != '-' && !isLowerAlphanumeric(c)) {
        return false;
      }
    }
    return true;
  }

  private static boolean isLowerAlphanumeric(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  }

  private static Set<String> logged(Pod pod, Function<Consumer<String>, Set<String>> visit) {
    List<String> problems = new ArrayList<>();
    Set<String> names = visit.apply(problems::add);
    if (!problems.isEmpty() && LOG.isWarnEnabled()) {
      String shown = String.join("; ", problems.subList(0, Math.min(MAX_LOGGED_PROBLEMS, problems.size())));
      String more = problems.size() > MAX_LOGGED_PROBLEMS
          ? "; and " + (problems.size() - MAX_LOGGED_PROBLEMS) + " more" : "";
      LOG.warn("Pod {}: {} problem(s), the invalid references are skipped and the valid ones used: {}{}",
          describe(pod), problems.size(), shown, more);
    }
    return names;
  }

  /** namespace/name (uid) of a pod, whatever it lacks; names are quoted only as far as {@link #quoted} goes. */
  static String describe(Pod pod) {
    ObjectMeta metadata = pod == null ? null : pod.getMetadata();
    if (metadata == null) {
      return "(no metadata)";
    }
    return shorten(metadata.getNamespace()) + "/" + shorten(metadata.getName())
        + (metadata.getUid() == null ? "" : " (uid " + shorten(metadata.getUid()) + ")");
  }

  private static String shorten(String s) {
    if (s == null) {
      return "<none>";
    }
    return s.length() <= MAX_QUOTED_LENGTH ? s : s.substring(0, MAX_QUOTED_LENGTH) + "...";
  }

  /** A name for a message: quoted, at most {@value #MAX_QUOTED_LENGTH} characters of it, and its length if longer. */
  private static String quoted(String name) {
    if (name.length() <= MAX_QUOTED_LENGTH) {
      return Quote.of(name);
    }
    return Quote.of(name.substring(0, MAX_QUOTED_LENGTH)) + "... (" + name.length() + " characters)";
  }

  private static <E> List<E> list(List<E> list) {
    return list == null ? List.of() : list;
  }

  private static final class Names {
    private final String kind;
    private final Consumer<String> problems;
    private final Set<String> names = new LinkedHashSet<>();

    Names(String kind, Consumer<String> problems) {
      this.kind = kind;
      this.problems = problems;
    }

    /** An optional reference object: absent references nothing; {@code field} is the reference's path. */
    void addRef(LocalObjectReference reference, Supplier<String> field) {
      if (reference != null) {
        add(reference.getName(), () -> field.get() + ".name");
      }
    }

    void add(String name, Supplier<String> field) {
      // like the kubelet, an empty (or absent) name references nothing
      if (name == null || name.isEmpty()) {
        return;
      }
      if (name.length() > MAX_NAME_LENGTH || !isDns1123Subdomain(name)) {
        problem(() -> field.get() + " " + quoted(name) + " is not a valid " + kind + " name (a lower case RFC 1123 "
            + "subdomain of at most " + MAX_NAME_LENGTH + " characters)");
        return;
      }
      names.add(name);
    }

    void problem(Supplier<String> problem) {
      problems.accept(problem.get());
    }

    Set<String> result() {
      return Collections.unmodifiableSet(names);
    }
  }
}
