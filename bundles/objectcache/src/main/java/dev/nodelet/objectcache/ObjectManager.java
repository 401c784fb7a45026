package dev.nodelet.objectcache;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Keeps the pods of this node and the objects of one {@link ResourceType} they reference (the kubelet's
 * {@code cacheBasedManager}), in the store of the strategy in use.
 *
 * <p>Pods are keyed by namespace, name and UID. Registering a pod adds a reference for each name it references;
 * registering it again adds only the names it did not reference before and deletes the names it dropped.
 * Unregistering deletes the references of the stored copy; an unknown pod is ignored. Neither blocks on the network.
 *
 * <p>Plain Java programs build managers with {@code dev.nodelet.cache.core.ObjectManagers} (bundle
 * {@code nodelet-cache-core}). The {@code nodelet-managers} bundle registers its managers as services of this
 * type too, with the properties {@value #RESOURCE_PROPERTY} and {@value #PID_PROPERTY}. Besides gets and watches, a
 * manager tells what it keeps ({@link #registeredPods()}, {@link #objects()}, {@link #receipts()},
 * {@link #watchStatistics()}) as values, never as text: its readiness check, its metrics and the shells (whose
 * listings decide the text) read them.
 *
 * @param <T> the Kubernetes type of the objects
 */
@ProviderType
public interface ObjectManager<T extends HasMetadata> extends PodListener {

  /** The service property with the plural resource name of a manager service, e.g. {@code configmaps}. */
  String RESOURCE_PROPERTY = "nodelet.resource";

  /** The service property with the configuration PID of a manager service, e.g. {@code dev.nodelet.configmap}. */
  String PID_PROPERTY = "nodelet.configuration.pid";

  /** @return the type of the objects */
  ResourceType<T> type();

  /**
   * Returns an object as the strategy in use knows it. A get that has started finishes on the store it started on,
   * also while the strategy changes.
   *
   * @param namespace the object's namespace
   * @param name the object's name
   * @return the object; never {@code null}. Callers must not modify it.
   * @throws NotRegisteredException if no registered pod references it (not with the {@code get} strategy)
   * @throws ObjectNotFoundException if the API server has no such object
   * @throws CacheSyncException if the store could not sync it within its wait bound
   * @throws IllegalStateException if the manager is closed
   */
  T get(String namespace, String name);

  /**
   * @return the name of the strategy in use: the {@value StoreStrategy#PROPERTY} property of the strategy service
   *     whose store answers, or {@code get} while the manager answers by itself ({@link #builtInStrategy()})
   */
  String strategy();

  /**
   * @return true while no strategy service is in use and the manager answers by itself, with the behaviour of the
   *     {@code get} strategy; {@link #strategy()} then says {@code get}
   * @since 4.0
   */
  boolean builtInStrategy();

  /** @return the registered pods, in registration order */
  List<RegisteredPod> registeredPods();

  /** @return the objects the registered pods reference, ordered by namespace and name */
  List<CachedObject> objects();

  /**
   * Tells, for every registered pod, which version of each object it references this manager serves now: its UID
   * and resource version, when it last changed on the API server, when Nodelet observed it, and whether it may be
   * stale. Never blocks on the network and never carries object content.
   *
   * @return a receipt per registered pod, in registration order
   * @since 3.0
   */
  default List<PodReceipt> receipts() {
    return List.of();
  }

  /**
   * Opens a watch on the objects that registered pods reference, with the API server's watch semantics (see
   * {@link WatchOptions}). The events come from what the store in use observes: with {@code watch} every change the
   * API server reports, with {@code ttl} and {@code get} the changes that fetches find. An object that no registered
   * pod references any more leaves the watched set ({@code DELETED}). Watches survive strategy changes and end when
   * the manager closes.
   *
   * @param options what to watch
   * @return the watch; close it when done
   * @throws WatchExpiredException if {@link WatchOptions#resourceVersion()} is older than the cache remembers
   * @throws IllegalArgumentException if the resource version is not a decimal number
   * @throws IllegalStateException if the manager is closed
   * @since 1.1
   */
  Watch<T> watch(WatchOptions<T> options);

  /**
   * @return counters of the watches on this manager
   * @since 1.1
   */
  WatchStatistics watchStatistics();
}
