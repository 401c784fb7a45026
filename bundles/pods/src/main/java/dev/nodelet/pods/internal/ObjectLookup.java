package dev.nodelet.pods.internal;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Secret;

/**
 * The ConfigMaps and Secrets that registered pods reference, as the managers serve them. Both may block (the
 * {@code get} strategy asks the API server): called on the pods' executor only.
 */
interface ObjectLookup {

  /**
   * @throws dev.nodelet.objectcache.ObjectNotFoundException if the API server has none
   * @throws dev.nodelet.objectcache.NotRegisteredException if the pod is not registered with the manager yet
   */
  ConfigMap configMap(String namespace, String name);

  /** As {@link #configMap}, for Secrets. */
  Secret secret(String namespace, String name);
}
