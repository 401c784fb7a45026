package dev.nodelet.objectcache.internal.watch;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
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
   * @param empty a new object with no content
   * @param copy a copy whose metadata can be changed without changing the original
   */
  public WatchObjects {
    Objects.requireNonNull(empty, "empty");
    Objects.requireNonNull(copy, "copy");
  }
}
