package dev.nodelet.kube.internal.watch;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The objects a reflector last reported. Most reflectors watch one object by name, so up to one object is kept in a
 * field, without a map or key; a map replaces it once a second object arrives. Written by one thread at a time (the
 * reflector's serial executor), read from any thread.
 */
final class KnownObjects<T extends HasMetadata> {

  /** The only object while {@link #many} is null. */
  private volatile T one;
  /** Namespace/name → object, once there were two objects; then {@link #one} is null. */
  private volatile Map<String, T> many;

  T get(String namespace, String name) {
    Map<String, T> map = many;
    if (map == null) {
      T single = one;
      if (single != null) {
        return matches(single, namespace, name) ? single : null;
      }
      map = many; // the map may have replaced the field meanwhile: it is published before the field is cleared
      if (map == null) {
        return null;
      }
    }
    return map.get(key(namespace, name));
  }

  /** @return the object it replaced, or null */
  T put(T object) {
    ObjectMeta metadata = object.getMetadata();
    Map<String, T> map = many;
    if (map == null) {
      T single = one;
      if (single == null || matches(single, metadata.getNamespace(), metadata.getName())) {
        one = object;
        return single;
      }
      map = new ConcurrentHashMap<>();
      map.put(key(single), single);
      map.put(key(object), object);
      many = map;
      one = null;
      return null;
    }
    return map.put(key(object), object);
  }

  /** @return the object removed, or null */
  T remove(T object) {
    ObjectMeta metadata = object.getMetadata();
    Map<String, T> map = many;
    if (map != null) {
      return map.remove(key(object));
    }
    T single = one;
    if (single != null && matches(single, metadata.getNamespace(), metadata.getName())) {
      one = null;
      return single;
    }
    return null;
  }

  List<T> values() {
    Map<String, T> map = many;
    if (map != null) {
      return List.copyOf(map.values());
    }
    T single = one;
    if (single != null) {
      return List.of(single);
    }
    map = many;
    return map == null ? List.of() : List.copyOf(map.values());
  }

  /** Removes every object that {@code kept} does not hold (by namespace and name) and returns them. */
  List<T> retainOnly(KnownObjects<T> kept) {
    List<T> removed = new ArrayList<>();
    for (T object : values()) {
      ObjectMeta metadata = object.getMetadata();
      if (kept.get(metadata.getNamespace(), metadata.getName()) == null) {
        remove(object);
        removed.add(object);
      }
    }
    return removed;
  }

  private static boolean matches(HasMetadata object, String namespace, String name) {
    ObjectMeta metadata = object.getMetadata();
    return Objects.equals(metadata.getName(), name) && Objects.equals(emptyToNull(metadata.getNamespace()),
        emptyToNull(namespace));
  }

  private static String emptyToNull(String namespace) {
    return namespace == null || namespace.isEmpty() ? null : namespace;
  }

  private static String key(HasMetadata object) {
    return key(object.getMetadata().getNamespace(), object.getMetadata().getName());
  }

  private static String key(String namespace, String name) {
    return namespace == null || namespace.isEmpty() ? name : namespace + "/" + name;
  }
}
