package dev.nodelet.podsource.internal;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;

/** A pod's identity, as the managers key their registrations. */
record PodKey(String namespace, String name, String uid) {

  static PodKey of(Pod pod) {
    ObjectMeta metadata = pod.getMetadata();
    return new PodKey(metadata.getNamespace(), metadata.getName(), metadata.getUid());
  }
}
