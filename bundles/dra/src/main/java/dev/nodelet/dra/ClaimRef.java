package dev.nodelet.dra;

import dev.nodelet.records.RecordChecks;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import java.util.List;

/**
 * A ResourceClaim that a driver is asked to prepare or unprepare, as in the kubelet's DRA plugin API. A driver
 * written for the kubelet reads the claim itself and checks that the UID is still the claim's; an in-process driver
 * may use the {@code results} that Nodelet read just before the call instead.
 *
 * @param namespace the claim's namespace
 * @param name the claim's name
 * @param uid the claim's UID; prepare and unprepare results are keyed by it
 * @param results the claim's {@code status.allocation.devices.results} of this driver when preparing; empty when
 *     unpreparing
 * @since 1.2
 */
public record ClaimRef(String namespace, String name, String uid, List<DeviceRequestAllocationResult> results) {

  /** Copies the list; rejects {@code null}. */
  public ClaimRef {
    RecordChecks.requireNonNull(ClaimRef.class, namespace, name, uid);
    results = List.copyOf(results);
  }

  /** A claim without allocation results. */
  public ClaimRef(String namespace, String name, String uid) {
    this(namespace, name, uid, List.of());
  }

  @Override
  public String toString() {
    return namespace + "/" + name + " (" + uid + ")";
  }
}
