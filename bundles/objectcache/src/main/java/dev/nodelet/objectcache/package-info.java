/**
 * The object cache of a Nodelet node: the contracts between the ConfigMap and Secret managers and the store
 * strategies that keep the objects the pods of this node reference.
 *
 * <p>A manager keeps the registered pods (it is a {@link dev.nodelet.objectcache.PodListener}) and asks a
 * {@link dev.nodelet.objectcache.StoreStrategy} service for one {@link dev.nodelet.objectcache.ObjectStore} per
 * {@link dev.nodelet.objectcache.ResourceType}. Stores count references per pod and answer gets; how fresh an answer is
 * depends on the strategy ({@code get}, {@code ttl} or {@code watch}). Failures are unchecked and typed:
 * {@link dev.nodelet.objectcache.NotRegisteredException}, {@link dev.nodelet.objectcache.ObjectNotFoundException},
 * {@link dev.nodelet.objectcache.CacheSyncException}; errors of the API server itself reach the caller as fabric8's
 * {@code KubernetesClientException}.
 *
 * <p>Managers also serve {@link dev.nodelet.objectcache.Watch}es on the objects that registered pods reference, fed
 * by what their stores observe ({@link dev.nodelet.objectcache.ObjectStore.Listener}).
 */
@Export
@Version("4.0.0")
package dev.nodelet.objectcache;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
