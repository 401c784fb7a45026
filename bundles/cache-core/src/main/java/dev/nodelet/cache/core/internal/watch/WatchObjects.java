package dev.nodelet.cache.core.internal.watch;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * How a {@link WatchHub} makes the objects of its events that are not simply the cached object: the empty object of
 * a bookmark, and the copy of a deleted object that gets the deletion's resource version.
 *
 * @param empty a new object with no content
 * @param copy a copy whose metadata can be changed without changing the original
 * @param <T> the Kubernetes type of the objects
 */
public record WatchObjects<T extends HasMetadata>(Supplier<T> empty, UnaryOperator<T> copy) {

  /** ConfigMaps. */
  public static final WatchObjects<ConfigMap> CONFIG_MAPS =
      new WatchObjects<>(ConfigMap::new, c -> new ConfigMapBuilder(c).build());

  /** Secrets. */
  public static final WatchObjects<Secret> SECRETS =
      new WatchObjects<>(Secret::new, s -> new SecretBuilder(s).build());

  /**
   * The way of any type: ConfigMaps and Secrets copy with their builders, other types through their no-argument
   * constructor and a serialization round trip.
   *
   * @param type the Java type of the objects
   * @param <T> the Kubernetes type of the objects
   * @return how to make that type's event objects
   */
  @SuppressWarnings("unchecked")
  public static <T extends HasMetadata> WatchObjects<T> of(Class<T> type) {
    if (type == ConfigMap.class) {
      return (WatchObjects<T>) CONFIG_MAPS;
    }
    if (type == Secret.class) {
      return (WatchObjects<T>) SECRETS;
    }
    KubernetesSerialization serialization = new KubernetesSerialization();
    return new WatchObjects<>(() -> {
      try {
        return type.getConstructor().newInstance();
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException(type.getName() + " has no public no-argument constructor", e);
      }
    }, serialization::clone);
  }

  /**
   * @param empty a new object with no content
   * @param copy a copy whose metadata can be changed without changing the original
   */
  public WatchObjects {
    Objects.requireNonNull(empty, "empty");
    Objects.requireNonNull(copy, "copy");
  }
}
