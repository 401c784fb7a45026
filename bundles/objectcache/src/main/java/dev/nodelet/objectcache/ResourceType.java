package dev.nodelet.objectcache;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * A kind of object a store keeps: its Java type, its plural resource name (used in error messages) and what makes
 * one of its objects immutable.
 *
 * @param <T> the Kubernetes type
 */
public final class ResourceType<T extends HasMetadata> {

  /** ConfigMaps; immutable when {@code .immutable == true}. */
  public static final ResourceType<ConfigMap> CONFIG_MAPS =
      of(ConfigMap.class, "configmaps", c -> Boolean.TRUE.equals(c.getImmutable()));

  /** Secrets; immutable when {@code .immutable == true}. */
  public static final ResourceType<Secret> SECRETS =
      of(Secret.class, "secrets", s -> Boolean.TRUE.equals(s.getImmutable()));

  private final Class<T> type;
  private final String plural;
  private final Predicate<? super T> immutable;

  private ResourceType(Class<T> type, String plural, Predicate<? super T> immutable) {
    this.type = Objects.requireNonNull(type, "type");
    this.plural = Objects.requireNonNull(plural, "plural");
    this.immutable = Objects.requireNonNull(immutable, "immutable");
  }

  /**
   * Describes a namespaced resource type.
   *
   * @param type the Java type
   * @param plural the plural resource name, e.g. {@code configmaps}
   * @param immutable whether an object can no longer change
   * @param <T> the Kubernetes type
   * @return the resource type
   */
  public static <T extends HasMetadata> ResourceType<T> of(Class<T> type, String plural,
      Predicate<? super T> immutable) {
    return new ResourceType<>(type, plural, immutable);
  }

  /** @return the Java type of the objects */
  public Class<T> type() {
    return type;
  }

  /** @return the plural resource name, e.g. {@code configmaps} */
  public String plural() {
    return plural;
  }

  /**
   * @param object an object of this type
   * @return true if the object can no longer change, so a store may stop watching it
   */
  public boolean isImmutable(T object) {
    return immutable.test(object);
  }

  /**
   * Checks that an object taken from an untyped cache has this type.
   *
   * @param object the object
   * @return the object with this type
   * @throws IllegalStateException {@code unexpected object type: <class>} if it has another type; the message names
   *     the class only, never the content
   */
  public T cast(Object object) {
    if (!type.isInstance(object)) {
      throw new IllegalStateException("unexpected object type: "
          + (object == null ? "null" : object.getClass().getName()));
    }
    return type.cast(object);
  }

  @Override
  public String toString() {
    return plural;
  }
}
