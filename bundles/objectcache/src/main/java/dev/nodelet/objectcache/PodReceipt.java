package dev.nodelet.objectcache;

import dev.nodelet.records.RecordChecks;
import java.util.List;

/**
 * What one manager serves to one registered pod: a receipt per object of the manager's type that the pod references.
 *
 * @param namespace the pod's namespace
 * @param name the pod's name
 * @param uid the pod's UID
 * @param objects a receipt per referenced object, in the pod's visiting order
 * @since 3.0
 */
public record PodReceipt(String namespace, String name, String uid, List<ObjectReceipt> objects) {

  /** Copies {@code objects}. */
  public PodReceipt {
    RecordChecks.requireNonNull(PodReceipt.class, namespace, name, uid);
    objects = List.copyOf(objects);
  }
}
