package dev.nodelet.objectcache;

import dev.nodelet.records.RecordChecks;
import java.time.Instant;
import java.util.Optional;

/**
 * The version of one referenced object that a manager serves to a pod: a propagation receipt. Never carries the
 * object's content.
 *
 * @param resource the plural resource name, e.g. {@code configmaps}
 * @param namespace the object's namespace
 * @param name the object's name
 * @param uid the UID of the copy served; empty if Nodelet has not observed the object (or it does not exist)
 * @param resourceVersion the resource version of the copy served; empty if not observed
 * @param lastChanged when the copy served was last changed on the API server: the newest {@code managedFields} time,
 *     else its {@code creationTimestamp}; empty if neither is known
 * @param seen when Nodelet first observed this resource version; empty if not observed
 * @param strategy the name of the strategy whose store serves it, as {@link ObjectManager#strategy()} names it
 * @param staleReason why the copy served may be out of date (the store's sync fails, its TTL expired, its watch is
 *     down or stopped, it is served from disk); empty if the store keeps it fresh
 * @param state what the store does about it; {@link ObjectState#FROM_DISK} when the copy served is the one a previous
 *     run stored on disk (then {@code uid} and {@code resourceVersion} are that copy's, {@code seen} is empty and
 *     {@code staleReason} says why the API server has not replaced it); empty if the store does not tell
 * @param refreshedOnNextGet (since 3.3) whether the copy is stale only because nothing refreshes it between gets:
 *     the next get asks the API server before it answers (see {@link ObjectStore#refreshedOnNextGet}), so nothing out
 *     of date is served unless that request fails. Always false when {@code staleReason} is empty
 * @since 3.0
 */
public record ObjectReceipt(String resource, String namespace, String name, Optional<String> uid,
    Optional<String> resourceVersion, Optional<Instant> lastChanged, Optional<Instant> seen, String strategy,
    Optional<String> staleReason, Optional<ObjectState> state, boolean refreshedOnNextGet) {

  /** Checks that nothing is {@code null}; a receipt that is not stale is not refreshed either. */
  public ObjectReceipt {
    RecordChecks.requireNonNull(ObjectReceipt.class, resource, namespace, name, uid, resourceVersion, lastChanged,
        seen, strategy, staleReason, state);
    refreshedOnNextGet = refreshedOnNextGet && staleReason.isPresent();
  }

  /**
   * A receipt that is refreshed on the next get exactly when its state is {@link ObjectState#IDLE}, as
   * {@link ObjectStore#refreshedOnNextGet} is by default.
   *
   * @since 3.0
   */
  public ObjectReceipt(String resource, String namespace, String name, Optional<String> uid,
      Optional<String> resourceVersion, Optional<Instant> lastChanged, Optional<Instant> seen, String strategy,
      Optional<String> staleReason, Optional<ObjectState> state) {
    this(resource, namespace, name, uid, resourceVersion, lastChanged, seen, strategy, staleReason, state,
        state != null && state.filter(ObjectState.IDLE::equals).isPresent());
  }

  /**
   * A receipt whose store does not tell its state.
   *
   * @since 3.0
   */
  public ObjectReceipt(String resource, String namespace, String name, Optional<String> uid,
      Optional<String> resourceVersion, Optional<Instant> lastChanged, Optional<Instant> seen, String strategy,
      Optional<String> staleReason) {
    this(resource, namespace, name, uid, resourceVersion, lastChanged, seen, strategy, staleReason,
        Optional.empty());
  }

  /**
   * @return true if the copy served is the one a previous run stored on disk, not yet confirmed or replaced by the
   *     API server
   * @since 3.1
   */
  public boolean fromDisk() {
    return state.filter(ObjectState.FROM_DISK::equals).isPresent();
  }

  /** @return true if the copy served may be out of date ({@link #staleReason()} says why) */
  public boolean stale() {
    return staleReason.isPresent();
  }

  /**
   * @return true if the copy served may be out of date and the next get does not simply fetch it afresh: a list,
   *     watch or fetch fails, the first sync is still awaited, the store is closed, or the copy comes from disk. What
   *     readiness fails on
   * @since 3.3
   */
  public boolean failing() {
    return stale() && !refreshedOnNextGet;
  }
}
