package dev.nodelet.persistence;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.Objects;
import java.util.Set;

/**
 * An object read back from disk.
 *
 * @param object the last version stored, with its UID and resourceVersion
 * @param podUids the pods that referenced it when it was stored
 * @param <T> the Kubernetes type of the object
 */
public record StoredObject<T extends HasMetadata>(T object, Set<String> podUids) {

  /** Checks that nothing is {@code null} and copies the UIDs. */
  public StoredObject {
    Objects.requireNonNull(object, "object");
    podUids = Set.copyOf(podUids);
  }
}
