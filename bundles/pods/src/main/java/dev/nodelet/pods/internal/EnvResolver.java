package dev.nodelet.pods.internal;

import dev.nodelet.objectcache.CacheSyncException;
import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectNotFoundException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapKeySelector;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ObjectFieldSelector;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A container's {@code env} and {@code envFrom} as the kubelet resolves them ({@code makeEnvironmentVariables}):
 * {@code envFrom} first, each key with its prefix (keys that are not valid names are skipped), then {@code env} in
 * order, a later name replacing an earlier one; literals, {@code configMapKeyRef}, {@code secretKeyRef} and
 * {@code fieldRef} to {@code metadata.name}, {@code metadata.namespace}, {@code metadata.uid},
 * {@code spec.nodeName}, {@code spec.serviceAccountName}, {@code status.hostIP}. A missing ConfigMap, Secret or key
 * that is not optional is a {@link ConfigError} with the kubelet's message; values are never part of a message.
 * The names whose final value came from a Secret are reported, so that those values are kept out of what is stored.
 */
final class EnvResolver {

  /** The kubelet's relaxed rule for environment variable names. */
  private static final Pattern NAME = Pattern.compile("[-._a-zA-Z][-._a-zA-Z0-9]*");

  private EnvResolver() {
  }

  static Map<String, String> resolve(Pod pod, Container container, ObjectLookup lookup, String hostIp)
      throws ConfigError {
    return resolve(pod, container, lookup, hostIp, new HashSet<>());
  }

  /**
   * @param fromSecrets receives the names whose value comes from a Secret ({@code envFrom} {@code secretRef},
   *     {@code secretKeyRef}); a later variable of the same name from elsewhere takes the name out again
   */
  static Map<String, String> resolve(Pod pod, Container container, ObjectLookup lookup, String hostIp,
      Set<String> fromSecrets) throws ConfigError {
    String namespace = pod.getMetadata().getNamespace();
    Map<String, String> env = new LinkedHashMap<>();
    if (container.getEnvFrom() != null) {
      for (EnvFromSource from : container.getEnvFrom()) {
        String prefix = Objects.requireNonNullElse(from.getPrefix(), "");
        Map<String, String> values = null;
        boolean secretSource = from.getSecretRef() != null && from.getConfigMapRef() == null;
        if (from.getConfigMapRef() != null) {
          ConfigMap map = configMap(lookup, namespace, from.getConfigMapRef().getName(),
              Boolean.TRUE.equals(from.getConfigMapRef().getOptional()));
          values = map == null ? Map.of() : configMapData(map);
        } else if (from.getSecretRef() != null) {
          Secret secret = secret(lookup, namespace, from.getSecretRef().getName(),
              Boolean.TRUE.equals(from.getSecretRef().getOptional()));
          values = secret == null ? Map.of() : secretData(secret);
        }
        if (values != null) {
          values.forEach((key, value) -> {
            if (NAME.matcher(prefix + key).matches()) {
              env.put(prefix + key, value);
              if (secretSource) {
                fromSecrets.add(prefix + key);
              } else {
                fromSecrets.remove(prefix + key);
              }
            }
          });
        }
      }
    }
    if (container.getEnv() != null) {
      for (EnvVar variable : container.getEnv()) {
        String value = value(pod, variable, lookup, hostIp);
        if (value != null) {
          env.put(variable.getName(), value);
          if (variable.getValueFrom() != null && variable.getValueFrom().getSecretKeyRef() != null) {
            fromSecrets.add(variable.getName());
          } else {
            fromSecrets.remove(variable.getName());
          }
        }
      }
    }
    return env;
  }

  /** @return the value; null for an optional reference that is missing (the variable is not set) */
  private static String value(Pod pod, EnvVar variable, ObjectLookup lookup, String hostIp) throws ConfigError {
    if (variable.getValueFrom() == null) {
      return Objects.requireNonNullElse(variable.getValue(), "");
    }
    String namespace = pod.getMetadata().getNamespace();
    ConfigMapKeySelector mapKey = variable.getValueFrom().getConfigMapKeyRef();
    if (mapKey != null) {
      boolean optional = Boolean.TRUE.equals(mapKey.getOptional());
      ConfigMap map = configMap(lookup, namespace, mapKey.getName(), optional);
      String value = map == null ? null : configMapData(map).get(mapKey.getKey());
      if (value == null && map != null && !optional) {
        throw new ConfigError("couldn't find key " + mapKey.getKey() + " in ConfigMap " + namespace + "/"
            + mapKey.getName(), false);
      }
      return value;
    }
    SecretKeySelector secretKey = variable.getValueFrom().getSecretKeyRef();
    if (secretKey != null) {
      boolean optional = Boolean.TRUE.equals(secretKey.getOptional());
      Secret secret = secret(lookup, namespace, secretKey.getName(), optional);
      String value = secret == null ? null : secretData(secret).get(secretKey.getKey());
      if (value == null && secret != null && !optional) {
        throw new ConfigError("couldn't find key " + secretKey.getKey() + " in Secret " + namespace + "/"
            + secretKey.getName(), false);
      }
      return value;
    }
    ObjectFieldSelector field = variable.getValueFrom().getFieldRef();
    if (field != null) {
      return switch (field.getFieldPath()) {
        case "metadata.name" -> pod.getMetadata().getName();
        case "metadata.namespace" -> namespace;
        case "metadata.uid" -> pod.getMetadata().getUid();
        case "spec.nodeName" -> pod.getSpec().getNodeName();
        case "spec.serviceAccountName" -> Objects.requireNonNullElse(pod.getSpec().getServiceAccountName(), "");
        case "status.hostIP", "status.podIP" -> Objects.requireNonNullElse(hostIp, "");
        default -> throw new ConfigError("unsupported fieldRef " + field.getFieldPath() + " of variable "
            + variable.getName() + " (supported: metadata.name, metadata.namespace, metadata.uid, spec.nodeName, "
            + "spec.serviceAccountName, status.hostIP, status.podIP)", false);
      };
    }
    throw new ConfigError("variable " + variable.getName() + ": valueFrom names no supported source "
        + "(configMapKeyRef, secretKeyRef, fieldRef)", false);
  }

  static ConfigMap configMap(ObjectLookup lookup, String namespace, String name, boolean optional)
      throws ConfigError {
    try {
      return lookup.configMap(namespace, name);
    } catch (ObjectNotFoundException e) {
      if (optional) {
        return null;
      }
      throw new ConfigError("configmap \"" + name + "\" not found", false);
    } catch (NotRegisteredException | CacheSyncException e) {
      throw new ConfigError("waiting for configmap \"" + name + "\": " + e.getMessage(), true);
    }
  }

  static Secret secret(ObjectLookup lookup, String namespace, String name, boolean optional) throws ConfigError {
    try {
      return lookup.secret(namespace, name);
    } catch (ObjectNotFoundException e) {
      if (optional) {
        return null;
      }
      throw new ConfigError("secret \"" + name + "\" not found", false);
    } catch (NotRegisteredException | CacheSyncException e) {
      throw new ConfigError("waiting for secret \"" + name + "\": " + e.getMessage(), true);
    }
  }

  /** {@code data} and {@code binaryData} (as UTF-8) of a ConfigMap. */
  static Map<String, String> configMapData(ConfigMap map) {
    Map<String, String> data = new LinkedHashMap<>();
    if (map.getBinaryData() != null) {
      map.getBinaryData().forEach((k, v) -> data.put(k, new String(Base64.getDecoder().decode(v),
          StandardCharsets.UTF_8)));
    }
    if (map.getData() != null) {
      data.putAll(map.getData());
    }
    return data;
  }

  /** {@code data} (decoded) and {@code stringData} of a Secret. */
  static Map<String, String> secretData(Secret secret) {
    Map<String, String> data = new LinkedHashMap<>();
    if (secret.getData() != null) {
      secret.getData().forEach((k, v) -> data.put(k, new String(Base64.getDecoder().decode(v),
          StandardCharsets.UTF_8)));
    }
    if (secret.getStringData() != null) {
      data.putAll(secret.getStringData());
    }
    return data;
  }
}
