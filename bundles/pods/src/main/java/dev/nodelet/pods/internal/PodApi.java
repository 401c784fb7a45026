package dev.nodelet.pods.internal;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;

/**
 * What the pods' runtime asks of the API server; blocking calls: the status writes on the {@link StatusWriter}'s
 * threads, the rest on the pods' executor.
 */
interface PodApi extends AutoCloseable {

  /** The outcome of a write. */
  enum Outcome {
    /** Written. */
    DONE,
    /** The pod is gone, or another pod (another UID) has its name now: forget it. */
    GONE,
    /** Failed for now (the API server away, say): try again later. */
    RETRY
  }

  /**
   * Writes the pod's status through {@code pods/status}, with the pod's UID as a precondition.
   *
   * @param pod the pod (namespace, name, UID)
   * @param status the whole status Nodelet owns
   * @return the outcome
   */
  Outcome writeStatus(Pod pod, PodStatus status);

  /**
   * Deletes the pod with grace period 0 and its UID as a precondition, once its containers stopped.
   *
   * @param pod the pod
   * @return the outcome; {@link Outcome#GONE} if it is gone already
   */
  Outcome delete(Pod pod);

  /**
   * @param name this node's name
   * @return this node's Node; null if it has none (yet) or it cannot be read now
   */
  Node node(String name);

  /** Releases what the API holds (a watch); the runtime's close calls it. */
  @Override
  default void close() {
  }
}
