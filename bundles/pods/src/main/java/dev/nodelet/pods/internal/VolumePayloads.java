package dev.nodelet.pods.internal;

import dev.nodelet.pods.internal.AtomicWriter.FileContent;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.KeyToPath;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeProjection;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The files of a pod's {@code configMap}, {@code secret} and {@code projected} (ConfigMap and Secret sources)
 * volumes, with the kubelet's rules: every key, or the {@code items} given (a missing key fails unless the volume is
 * optional), {@code defaultMode} 0644 unless given, an item's {@code mode} over it; an optional volume whose object
 * is missing is empty; a missing object that is not optional fails with the kubelet's {@code configmap "x" not
 * found}. Other volume types are not Nodelet's: they get no folder.
 */
final class VolumePayloads {

  static final int DEFAULT_MODE = 0644;

  private VolumePayloads() {
  }

  /** @return true if Nodelet writes this volume */
  static boolean handled(Volume volume) {
    return volume.getConfigMap() != null || volume.getSecret() != null || volume.getProjected() != null;
  }

  /** @return the volume's files, or null for a volume Nodelet does not write */
  static Map<String, FileContent> payload(Pod pod, Volume volume, ObjectLookup lookup) throws ConfigError {
    String namespace = pod.getMetadata().getNamespace();
    Map<String, FileContent> files = new LinkedHashMap<>();
    if (volume.getConfigMap() != null) {
      var source = volume.getConfigMap();
      boolean optional = Boolean.TRUE.equals(source.getOptional());
      ConfigMap map = EnvResolver.configMap(lookup, namespace, source.getName(), optional);
      if (map != null) {
        add(files, bytes(EnvResolver.configMapData(map)), source.getItems(), mode(source.getDefaultMode()),
            optional, "configmap", source.getName());
      }
      return files;
    }
    if (volume.getSecret() != null) {
      var source = volume.getSecret();
      boolean optional = Boolean.TRUE.equals(source.getOptional());
      Secret secret = EnvResolver.secret(lookup, namespace, source.getSecretName(), optional);
      if (secret != null) {
        add(files, secretBytes(secret), source.getItems(), mode(source.getDefaultMode()), optional, "secret",
            source.getSecretName());
      }
      return files;
    }
    if (volume.getProjected() != null) {
      int defaultMode = mode(volume.getProjected().getDefaultMode());
      for (VolumeProjection projection : volume.getProjected().getSources()) {
        if (projection.getConfigMap() != null) {
          var source = projection.getConfigMap();
          boolean optional = Boolean.TRUE.equals(source.getOptional());
          ConfigMap map = EnvResolver.configMap(lookup, namespace, source.getName(), optional);
          if (map != null) {
            add(files, bytes(EnvResolver.configMapData(map)), source.getItems(), defaultMode, optional,
                "configmap", source.getName());
          }
        } else if (projection.getSecret() != null) {
          var source = projection.getSecret();
          boolean optional = Boolean.TRUE.equals(source.getOptional());
          Secret secret = EnvResolver.secret(lookup, namespace, source.getName(), optional);
          if (secret != null) {
            add(files, secretBytes(secret), source.getItems(), defaultMode, optional, "secret", source.getName());
          }
        }
      }
      return files;
    }
    return null;
  }

  private static void add(Map<String, FileContent> files, Map<String, byte[]> data, List<KeyToPath> items,
      int defaultMode, boolean optional, String kind, String name) throws ConfigError {
    if (items == null || items.isEmpty()) {
      data.forEach((key, value) -> files.put(key, new FileContent(value, defaultMode)));
      return;
    }
    for (KeyToPath item : items) {
      byte[] value = data.get(item.getKey());
      if (value == null) {
        if (optional) {
          continue;
        }
        throw new ConfigError(kind + " \"" + name + "\" has no key " + item.getKey()
            + " (an item of a volume that is not optional)", false);
      }
      files.put(item.getPath(), new FileContent(value, item.getMode() == null ? defaultMode : item.getMode()));
    }
  }

  private static int mode(Integer mode) {
    return mode == null ? DEFAULT_MODE : mode;
  }

  private static Map<String, byte[]> bytes(Map<String, String> data) {
    Map<String, byte[]> out = new LinkedHashMap<>();
    data.forEach((k, v) -> out.put(k, v.getBytes(StandardCharsets.UTF_8)));
    return out;
  }

  private static Map<String, byte[]> secretBytes(Secret secret) {
    Map<String, byte[]> out = new LinkedHashMap<>();
    if (secret.getData() != null) {
      secret.getData().forEach((k, v) -> out.put(k, Base64.getDecoder().decode(v)));
    }
    if (secret.getStringData() != null) {
      secret.getStringData().forEach((k, v) -> out.put(k, v.getBytes(StandardCharsets.UTF_8)));
    }
    return out;
  }
}
