package dev.nodelet.objectcache;

import io.fabric8.kubernetes.api.model.Secret;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The Secrets that the pods of this node reference (the kubelet's secret manager), registered as a service by the
 * {@code nodelet-managers} bundle together with {@link PodListener}.
 */
@ProviderType
public interface SecretManager extends PodListener {

  /**
   * Returns a Secret as the strategy in use knows it.
   *
   * @param namespace the Secret's namespace
   * @param name the Secret's name
   * @return the Secret; never {@code null}. Callers must not modify it, and must not log its data.
   * @throws NotRegisteredException if no registered pod references it (not with the {@code get} strategy)
   * @throws ObjectNotFoundException if the API server has no such Secret
   * @throws CacheSyncException if the store could not sync it within its wait bound
   */
  Secret getSecret(String namespace, String name);

  /**
   * Opens a watch on the Secrets that registered pods reference; see {@link ObjectManager#watch}. The events carry
   * the Secrets with their data: do not log them ({@link WatchEvent#toString()} names the object only).
   *
   * @param options what to watch
   * @return the watch; close it when done
   * @throws WatchExpiredException if the resource version is older than the cache remembers
   * @throws IllegalStateException if the manager is closed
   * @since 1.1
   */
  Watch<Secret> watch(WatchOptions<Secret> options);
}
