package dev.nodelet.objectcache;

import io.fabric8.kubernetes.api.model.ConfigMap;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The ConfigMaps that the pods of this node reference (the kubelet's configmap manager), registered as a service by
 * the {@code nodelet-managers} bundle together with {@link PodListener}.
 */
@ProviderType
public interface ConfigMapManager extends PodListener {

  /**
   * Returns a ConfigMap as the strategy in use knows it.
   *
   * @param namespace the ConfigMap's namespace
   * @param name the ConfigMap's name
   * @return the ConfigMap; never {@code null}. Callers must not modify it.
   * @throws NotRegisteredException if no registered pod references it (not with the {@code get} strategy)
   * @throws ObjectNotFoundException if the API server has no such ConfigMap
   * @throws CacheSyncException if the store could not sync it within its wait bound
   */
  ConfigMap getConfigMap(String namespace, String name);

  /**
   * Opens a watch on the ConfigMaps that registered pods reference; see {@link ObjectManager#watch}.
   *
   * @param options what to watch
   * @return the watch; close it when done
   * @throws WatchExpiredException if the resource version is older than the cache remembers
   * @throws IllegalStateException if the manager is closed
   * @since 1.1
   */
  Watch<ConfigMap> watch(WatchOptions<ConfigMap> options);
}
