package dev.nodelet.objectcache;

import dev.nodelet.records.RecordChecks;
import java.util.List;

/**
 * A pod a manager keeps, with the names of the objects it references.
 *
 * @param namespace the pod's namespace
 * @param name the pod's name
 * @param uid the pod's UID
 * @param references the names of the referenced objects (in the pod's namespace), in visiting order
 */
public record RegisteredPod(String namespace, String name, String uid, List<String> references) {

  /** Copies {@code references}. */
  public RegisteredPod {
    RecordChecks.requireNonNull(RegisteredPod.class, namespace, name, uid);
    references = List.copyOf(references);
  }
}
