package dev.nodelet.objectcache;

import io.fabric8.kubernetes.api.model.Pod;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Whiteboard service told about the pods of this node.
 *
 * <p>Implementations must return quickly and never block on the network: callers deliver pod events from a single
 * thread. Both methods are idempotent.
 */
@ConsumerType
public interface PodListener {

  /**
   * A pod was created or updated on this node. Pods are identified by namespace, name and UID.
   *
   * @param pod the pod as it is now
   */
  void registerPod(Pod pod);

  /**
   * A pod left this node. An unknown pod is ignored.
   *
   * @param pod the pod; only its namespace, name and UID are used
   */
  void unregisterPod(Pod pod);
}
