package dev.nodelet.dra;

import java.util.Objects;

/**
 * A ResourceClaim that a driver is asked to prepare or unprepare, as in the kubelet's DRA plugin API: the driver
 * reads the claim itself (its allocation names the devices) and checks that the UID is still the claim's.
 *
 * @param namespace the claim's namespace
 * @param name the claim's name
 * @param uid the claim's UID; prepare and unprepare results are keyed by it
 * @since 1.2
 */
public record ClaimRef(String namespace, String name, String uid) {

  /** Rejects {@code null}. */
  public ClaimRef {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(uid, "uid");
  }

  @Override
  public String toString() {
    return namespace + "/" + name + " (" + uid + ")";
  }
}
