package dev.nodelet.objectcache;

import io.fabric8.kubernetes.api.model.Secret;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The Secrets that the pods of this node reference (the kubelet's secret manager), registered as a service by the
 * {@code nodelet-secret} bundle together with {@link PodListener}.
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
}
