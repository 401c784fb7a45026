package dev.nodelet.objectcache;

import dev.nodelet.records.RecordChecks;
import java.time.Instant;
import java.util.Optional;

/**
 * An object that registered pods reference, as a manager sees it. Never carries the object's content.
 *
 * @param namespace the object's namespace
 * @param name the object's name
 * @param strategy the name of the strategy whose store keeps it, as {@link ObjectManager#strategy()} names it
 * @param state what the store does about it; empty if the store does not tell
 * @param references how many registered pods reference it; for an object that only pods of a previous run
 *     reference ({@link ObjectStore#restoredObjects()}, state {@link ObjectState#FROM_DISK}), how many of those
 * @param lastAccess when a get last asked for it, as the store tells (to its precision); empty if never, or if the
 *     store does not tell
 */
public record CachedObject(String namespace, String name, String strategy, Optional<ObjectState> state,
    int references, Optional<Instant> lastAccess) {

  /** Checks that nothing is {@code null}. */
  public CachedObject {
    RecordChecks.requireNonNull(CachedObject.class, namespace, name, strategy, state, references, lastAccess);
  }
}
