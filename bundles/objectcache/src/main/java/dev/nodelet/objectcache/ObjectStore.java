package dev.nodelet.objectcache;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.osgi.annotation.versioning.ConsumerType;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A local store of the objects of one {@link ResourceType} that registered pods reference.
 *
 * <p>References are counted per pod UID: an object is registered while at least one pod holds a reference to it.
 * {@link #addReference} and {@link #deleteReference} are called from {@link PodListener} callbacks and never block on
 * the network; {@link #get} may block (to fetch the object or to wait for its cache to sync). All methods are safe to
 * call from any thread.
 *
 * <p>A store created with a {@link Listener} tells it what it observes of the API server, so that a manager can serve
 * watches on its objects (see {@link StoreStrategy#createStore(ResourceType, Listener)}).
 *
 * @param <T> the Kubernetes type of the stored objects
 */
@ProviderType
public interface ObjectStore<T extends HasMetadata> extends AutoCloseable {

  /**
   * Records that the pod {@code podUid} references the object {@code namespace/name}.
   *
   * @param namespace the object's namespace
   * @param name the object's name
   * @param podUid the UID of the referencing pod
   */
  void addReference(String namespace, String name, String podUid);

  /**
   * Removes one reference of the pod {@code podUid} to the object {@code namespace/name}; when no reference remains
   * the object is no longer registered. Removing a reference that was never added does nothing.
   *
   * @param namespace the object's namespace
   * @param name the object's name
   * @param podUid the UID of the referencing pod
   */
  void deleteReference(String namespace, String name, String podUid);

  /**
   * Returns the object as this store's strategy knows it.
   *
   * @param namespace the object's namespace
   * @param name the object's name
   * @return the object; never {@code null}. Callers must not modify it.
   * @throws NotRegisteredException if no pod references the object
   * @throws ObjectNotFoundException if the API server has no such object
   * @throws CacheSyncException if the store could not sync the object within its wait bound
   * @throws io.fabric8.kubernetes.client.KubernetesClientException if the API server could not be asked and nothing
   *     usable is cached
   */
  T get(String namespace, String name);

  /**
   * Tells what this store does about one registered object, for listings such as the shell's. Never blocks on the
   * network. Stores that keep no per-object state (like {@code get}) need not override it.
   *
   * @param namespace the object's namespace
   * @param name the object's name
   * @return the state; empty if the object is not registered or the store does not tell
   */
  default Optional<ObjectState> state(String namespace, String name) {
    return Optional.empty();
  }

  /**
   * When a get last asked for one registered object, for listings. Stores keep it to their own precision (the watch
   * store to the second, so that a get never reads a clock). Never blocks on the network.
   *
   * @param namespace the object's namespace
   * @param name the object's name
   * @return the time; empty if the object is not registered, was never read, or the store does not tell
   * @since 1.4
   */
  default Optional<Instant> lastAccess(String namespace, String name) {
    return Optional.empty();
  }

  /**
   * Why the copy of one registered object this store serves may be out of date, for receipts and health checks: its
   * list or watch fails, its time-to-live expired, its watch is stopped. Never blocks on the network. Stores that
   * fetch on every get (like {@code get}) need not override it.
   *
   * @param namespace the object's namespace
   * @param name the object's name
   * @return a short reason naming what fails, never object content; empty if the store keeps the object fresh, or if
   *     it is not registered
   * @since 3.0
   */
  default Optional<String> staleness(String namespace, String name) {
    return Optional.empty();
  }

  /**
   * Whether the copy of one registered object is stale ({@link #staleness}) only because nothing refreshes it between
   * gets, so that the next get asks the API server before it answers: its time-to-live expired or it was never
   * fetched, or its watch stopped because nobody read it ({@link ObjectState#IDLE}). Such an object is not current,
   * but nothing out of date is served from it unless that request fails, which the store then reports as stale
   * without this flag. False for failures (a failed list, watch or fetch), a first sync still awaited, a closed store
   * and a copy served from disk. Never blocks on the network.
   *
   * @param namespace the object's namespace
   * @param name the object's name
   * @return true if the next get fetches or lists the object afresh; by default, true for the state
   *     {@link ObjectState#IDLE}
   * @since 3.3
   */
  default boolean refreshedOnNextGet(String namespace, String name) {
    return state(namespace, name).filter(ObjectState.IDLE::equals).isPresent();
  }

  /**
   * The objects this store serves that only pods of a previous run reference: read back from disk (see
   * {@link ObjectState#FROM_DISK}), and no pod registered since references them. They are served, so listings show
   * them next to the objects that registered pods reference. Never blocks on the network.
   *
   * @return the objects, in no particular order; empty if none, or if the store keeps nothing on disk
   * @since 3.1
   */
  default List<Restored> restoredObjects() {
    return List.of();
  }

  /**
   * The copy of one registered object that this store serves from disk: stored by a previous run, not confirmed or
   * replaced by the API server yet (its state is {@link ObjectState#FROM_DISK}). For receipts, which take its UID
   * and resource version from it. Never blocks on the network.
   *
   * @param namespace the object's namespace
   * @param name the object's name
   * @return the copy, which callers must not modify nor show; empty if the store serves no copy from disk for it
   * @since 3.1
   */
  default Optional<T> diskCopy(String namespace, String name) {
    return Optional.empty();
  }

  /**
   * An object that only pods of a previous run reference (see {@link #restoredObjects()}).
   *
   * @param namespace the object's namespace
   * @param name the object's name
   * @param pods how many pods of the previous run referenced it
   * @since 3.1
   */
  record Restored(String namespace, String name, int pods) {

    /** Checks that nothing is {@code null}. */
    public Restored {
      Objects.requireNonNull(namespace, "namespace");
      Objects.requireNonNull(name, "name");
    }
  }

  /**
   * Stops the store: every watch and timer it owns ends and nothing restarts. Registrations and objects served from
   * memory stay readable; gets that need the API server fail. Idempotent.
   */
  @Override
  void close();

  /**
   * What a store tells its owner about the objects it observes: each object a watch delivers or a fetch returns, and
   * each object a watch reports deleted or a fetch does not find. Reporting the same resource version twice is
   * harmless; a manager ignores objects no registered pod references.
   *
   * <p>Stores call it from their own threads (a watch callback, or the thread of the get that fetched), never from
   * {@link ObjectStore#addReference} or {@link ObjectStore#deleteReference}: a call may wait briefly (a manager's
   * watch fan-out waits at most its dispatch budget, 100 ms) for slow watchers. Stores must not hold a lock that
   * their reference methods need while they call it. Calls for one object should come in the order observed.
   *
   * @param <T> the Kubernetes type of the objects
   */
  @ConsumerType
  interface Listener<T extends HasMetadata> {

    /**
     * The store observed an object as it is now.
     *
     * @param object the object; the listener may keep it, so the store must not modify it afterwards
     */
    void changed(T object);

    /**
     * The store observed that an object is gone: a watch reported its deletion, or a fetch did not find it.
     *
     * @param namespace the object's namespace
     * @param name the object's name
     * @param resourceVersion the resource version of the deletion; {@code null} if unknown (a fetch, or a relist)
     */
    void deleted(String namespace, String name, String resourceVersion);

    /**
     * @param <T> the Kubernetes type of the objects
     * @return a listener that ignores everything, for stores nobody listens to
     */
    static <T extends HasMetadata> Listener<T> none() {
      return new Listener<>() {
        @Override
        public void changed(T object) {
          // nobody listens
        }

        @Override
        public void deleted(String namespace, String name, String resourceVersion) {
          // nobody listens
        }
      };
    }
  }
}
