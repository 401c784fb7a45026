package dev.nodelet.dra.claims;

import dev.nodelet.dra.PreparedDevice;
import dev.nodelet.records.RecordChecks;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A ResourceClaim used by pods of this node, as the claim manager sees it.
 *
 * @param namespace the claim's namespace
 * @param name the claim's name; for a pod whose claim cannot be resolved yet, the pod's claim entry
 *     ({@code pod <name>, claim <entry>})
 * @param uid the claim's UID, empty while unknown
 * @param state where the claim is
 * @param pods the pods that use it, {@code namespace/name} (or the UID of a pod that is gone)
 * @param devices the prepared devices per driver, ordered by driver name; empty until prepared
 * @param error the last error, or {@code null}
 * @param nextRetry when the failed step is tried again, or {@code null}
 */
public record ClaimInfo(String namespace, String name, String uid, State state, List<String> pods,
    Map<String, List<PreparedDevice>> devices, String error, Instant nextRetry) {

  /** Where a claim is. */
  public enum State {
    /** Known and being prepared, or waiting for its allocation, reservation or driver. */
    PREPARING,
    /** Every driver prepared it. */
    PREPARED,
    /** No pod of this node uses it any more; its drivers are asked to unprepare it. */
    UNPREPARING,
    /** The last attempt failed; see {@link ClaimInfo#error()}. */
    FAILED
  }

  /** Copies the collections. */
  public ClaimInfo {
    RecordChecks.requireNonNull(ClaimInfo.class, namespace, name, uid, state);
    pods = List.copyOf(pods);
    devices = Map.copyOf(devices);
  }
}
