package dev.nodelet.podsource.internal;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;

/** A pod's identity, as the managers key their registrations. */
public record PodKey(String namespace, String name, String uid) {

  /** The key of a pod; a pod without metadata (never one of the API server's) has a key of nulls. */
  public static PodKey of(Pod pod) {
    ObjectMeta metadata = pod.getMetadata();
    return metadata == null ? new PodKey(null, null, null)
        : new PodKey(metadata.getNamespace(), metadata.getName(), metadata.getUid());
  }

  /** namespace/name (uid), for log lines. */
  @Override
  public String toString() {
    return namespace + "/" + name + " (uid " + uid + ")";
  }
}
