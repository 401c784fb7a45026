package dev.nodelet.kube.watch;

import io.fabric8.kubernetes.api.model.HasMetadata;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Creates {@link Reflector}s that share one set of callback threads, one timer and one restart bucket. The
 * {@code nodelet-kube} bundle registers one as a service; it closes every reflector it created when its
 * configuration changes or the bundle stops.
 */
@ProviderType
public interface Reflectors {

  /**
   * @param type a fabric8 model class (its group, version and plural name are taken from its annotations)
   * @param <T> the resource type
   * @return a builder of a reflector for that type, in all namespaces and without selectors unless told otherwise
   */
  <T extends HasMetadata> Reflector.Builder<T> reflector(Class<T> type);
}
