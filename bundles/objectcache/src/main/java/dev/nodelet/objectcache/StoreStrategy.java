package dev.nodelet.objectcache;

import io.fabric8.kubernetes.api.model.HasMetadata;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A way of keeping objects fresh, registered as an OSGi service with the property {@value #PROPERTY}.
 *
 * <p>Nodelet ships {@code get} (every get asks the API server), {@code ttl} (cached copies refreshed after a
 * time-to-live) and {@code watch} (one watch per referenced object, the default); other bundles may add more. A
 * manager creates one store per resource type and closes it when it switches to another strategy.
 */
@ConsumerType
public interface StoreStrategy {

  /** The service property that names the strategy, e.g. {@code (nodelet.strategy=watch)}. */
  String PROPERTY = "nodelet.strategy";

  /**
   * Creates a new, empty store that tells {@code listener} what it observes of the API server (see
   * {@link ObjectStore.Listener}), so that a manager can serve watches from it. The caller owns the store and must
   * {@linkplain ObjectStore#close() close} it. A strategy that observes nothing tells nothing: watches through a
   * manager then see no changes while it uses this strategy.
   *
   * @param type the type of the objects to keep
   * @param listener told of every object the store observes
   * @param <T> the Kubernetes type of the objects
   * @return a new store
   */
  <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type, ObjectStore.Listener<? super T> listener);

  /**
   * Creates a new, empty store that tells no one what it observes. The caller owns it and must
   * {@linkplain ObjectStore#close() close} it.
   *
   * @param type the type of the objects to keep
   * @param <T> the Kubernetes type of the objects
   * @return a new store
   */
  default <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type) {
    return createStore(type, ObjectStore.Listener.none());
  }
}
