package dev.nodelet.store.watch.internal;

import dev.nodelet.cache.core.ApiServerErrors;
import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.objectcache.ObjectState;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * One watched object: its references per pod, the flags of the kubelet's objectCacheItem and the snapshot that gets
 * read without a lock. A stopped mutable item is not initialized (no snapshot): the next get waits for a fresh list.
 * An immutable item keeps the copy it saw and needs no watch.
 *
 * <p>Each start of the list+watch cycle gets a new run number and a reflector of its own; callbacks of an earlier run
 * are ignored, so a stopped reflector that still delivers an event changes nothing.
 */
final class WatchItem<T extends HasMetadata> {

  /**
   * What a get may return without taking a lock.
   *
   * @param object the object, or null if the API server has none
   * @param servable whether a get may return it as is; false while it is immutable but not yet kept as such, or kept
   *     but awaiting verification
   * @param fromDisk whether it is the copy a previous run stored, not yet confirmed by the API server
   */
  record Snapshot<T>(T object, boolean servable, boolean fromDisk) {
    Snapshot(T object, boolean servable) {
      this(object, servable, false);
    }
  }

  final String namespace;
  final String name;
  /** References per pod UID; guarded by the owning store's lock. */
  final Map<String, Integer> references = new HashMap<>(2); // mostly one pod: a table of 2, not 16
  /**
   * Pods whose reference was read back from disk and that have not registered again in this run; guarded by the
   * owning store's lock.
   */
  final Set<String> restoredPods = new HashSet<>();
  /** Held while a change is installed and told to the listener, so the listener hears changes in their order. */
  final Object reports = new Object();
  private final Predicate<? super T> immutable;

  /** Null while not initialized. */
  volatile Snapshot<T> snapshot;
  /** The last access, in the store's coarse clock (milliseconds). */
  volatile long lastAccess;
  /** The last time a pod referenced it, in the store's coarse clock; with {@link #lastAccess}, its last use. */
  volatile long referenced;
  /** Set while the watch budget serves it by GETs instead of a watch ({@link WatchBudget}). */
  volatile Polled polled;
  /**
   * The polling of an item moved back to a watch, kept until that watch delivers: its copy is still served by the
   * TTL rules until then, since only a delivered list or event makes it current.
   */
  volatile Polled handover;

  // guarded by this
  private int run;
  private boolean running;
  private Reflector<T> reflector;
  private String resourceVersion;
  /** The last failure of a list or watch, until one succeeds. */
  private Throwable lastError;
  private T immutableCopy;
  private boolean verify;
  /** Whether the running cycle has delivered the object: only then did its watch keep the copy current. */
  private boolean delivered;

  /**
   * @param namespace the object's namespace
   * @param name the object's name
   * @param immutable whether an object can no longer change
   * @param created the creation time, counted as the first access so that an unread item is idle only after a while
   */
  WatchItem(String namespace, String name, Predicate<? super T> immutable, long created) {
    this.namespace = namespace;
    this.name = name;
    this.immutable = immutable;
    this.lastAccess = created;
  }

  /** Notes a read; writes only when the coarse time moved, so that concurrent readers share a clean cache line. */
  void touch(long now) {
    if (lastAccess != now) {
      lastAccess = now;
    }
  }

  /**
   * The fetches of a polled item, guarded by itself: holding it also serialises the gets that fetch, as the TTL
   * store does.
   */
  static final class Polled {
    /** When the copy was last fetched (or last kept current by the watch), in clock millis; -1 if it never was. */
    long fetched = -1;
    /** The previous get while polled, in the store's coarse clock as {@link #lastUsed()}; -1 if none. */
    long lastRead = -1;
    /** The last failure of a fetch, until one succeeds; read without the lock by staleness reports. */
    volatile Throwable lastError;
  }

  /** The last use by a get or a reference, for the watch budget's least-recently-used order. */
  long lastUsed() {
    return Math.max(lastAccess, referenced);
  }

  /**
   * Starts a new list+watch cycle unless one runs, the item is polled or an immutable copy makes it unneeded.
   *
   * @return the run number to start, or 0 if nothing is to start
   */
  synchronized int start() {
    if (running || polled != null || immutableCopy != null) {
      return 0;
    }
    running = true;
    resourceVersion = null;
    delivered = false;
    return ++run;
  }

  /**
   * Serves the copy a previous run stored until a watch resumed from its resourceVersion confirms or replaces it.
   *
   * @return the run number to start: its watch resumes from the stored version, a 410 makes it list
   */
  synchronized int restore(T object) {
    resourceVersion = object.getMetadata().getResourceVersion();
    snapshot = new Snapshot<>(object, true, true);
    running = true;
    delivered = false;
    return ++run;
  }

  /**
   * Stops the cycle and drops the snapshot of a mutable object; the caller closes the reflector ({@link #takeReflector()}).
   *
   * @return false if it was stopped already
   */
  synchronized boolean stop() {
    if (polled != null) {
      polled = null;
      snapshot = null;
      return true;
    }
    if (!running) {
      return false;
    }
    running = false;
    handover = null;
    run++;
    if (immutableCopy == null) {
      snapshot = null;
    }
    return true;
  }

  synchronized boolean isRun(int run) {
    return running && this.run == run;
  }

  /** Installs what a list or watch event of {@code run} saw; false if that run is over. */
  synchronized boolean observed(int run, T object, String version) {
    if (!isRun(run)) {
      return false;
    }
    if (version != null) {
      resourceVersion = version;
    }
    lastError = null;
    delivered = true;
    handover = null;
    snapshot = new Snapshot<>(object, object != null && !immutable.test(object));
    return true;
  }

  /**
   * A bookmark or anything else that proves the watch works.
   *
   * @return the copy from disk that this confirms as current, for the listener to hear of; null if none
   */
  synchronized T progressed(int run, String version) {
    if (isRun(run) && version != null) {
      resourceVersion = version;
      lastError = null;
      Snapshot<T> current = snapshot;
      if (current != null && current.fromDisk()) {
        // a bookmark past the stored version: nothing happened to the object since, the copy is current
        snapshot = new Snapshot<>(current.object(), current.servable());
        delivered = true;
        return current.object();
      }
    }
    return null;
  }

  /** Whether every reference is one read back from disk: no pod registered in this run references it. */
  boolean onlyRestoredReferences() {
    return !references.isEmpty() && restoredPods.containsAll(references.keySet());
  }

  /** Keeps the reflector of {@code run}; returns false (and the caller closes it) if that run is over. */
  synchronized boolean watching(int run, Reflector<T> reflector) {
    if (!isRun(run)) {
      return false;
    }
    this.reflector = reflector;
    return true;
  }

  /** The watch of {@code run} is open again after it ended: the API server answered, even before an event. */
  synchronized void reopened(int run) {
    if (isRun(run)) {
      lastError = null;
    }
  }

  /** Whether the item's watch is up: it has a reflector whose last list or watch did not fail. */
  synchronized boolean hasWatch() {
    return reflector != null && lastError == null;
  }

  /** The last failure of a list or watch since the last success, or null. */
  synchronized Throwable lastError() {
    return lastError;
  }

  /** A list or watch of {@code run} failed (its reflector retries); {@code relist}: it lists again. */
  synchronized void failed(int run, boolean relist, Throwable error) {
    if (!isRun(run)) {
      return;
    }
    lastError = error;
    if (relist) {
      resourceVersion = null;
    }
  }

  /** Stops a running, synced, mutable item that was not read for longer than {@code maxIdleMillis}. */
  synchronized boolean stopIfIdle(long now, long maxIdleMillis) {
    // a copy from disk stays watched: stopping would drop it, and the API server may not be there to list again
    Snapshot<T> current = snapshot;
    return running && immutableCopy == null && current != null && !current.fromDisk()
        && now - lastAccess > maxIdleMillis && stop();
  }

  /**
   * Ends the watch cycle and serves the object by GETs: the copy stays, no longer served without a look at its age
   * (current now if the watch delivered it and is up; otherwise the next get fetches it). The caller closes the watch
   * ({@link #takeReflector()}).
   *
   * @param now the clock's millis
   * @return false if the item is not running (stopped, polled or immutable)
   */
  synchronized boolean demote(long now) {
    if (!running || immutableCopy != null) {
      return false;
    }
    running = false;
    handover = null;
    run++;
    Polled next = new Polled();
    Snapshot<T> current = snapshot;
    if (current != null) {
      if (delivered && lastError == null && !current.fromDisk()) {
        next.fetched = now;
      }
      snapshot = new Snapshot<>(current.object(), false, current.fromDisk());
    }
    polled = next;
    return true;
  }

  /**
   * Ends polling for a watch that the caller starts ({@link #start()}): until that watch delivers, the copy is served
   * by the TTL rules ({@link #handover}).
   *
   * @return false if the item is not polled (any more)
   */
  synchronized boolean unpoll() {
    if (polled == null) {
      return false;
    }
    handover = polled;
    polled = null;
    return true;
  }

  /**
   * Installs what a fetch of a polled item found (null: no such object): a copy of an older resourceVersion than
   * the one held is ignored and stays stale, as in the TTL store.
   *
   * @return false if the item is no longer polled by {@code by} or the copy was older
   */
  synchronized boolean fetched(Polled by, T object, long now) {
    if (polled != by && handover != by) {
      return false;
    }
    Snapshot<T> current = snapshot;
    if (object != null && current != null && !current.fromDisk() && current.object() != null
        && version(object) < version(current.object())) {
      return false;
    }
    snapshot = new Snapshot<>(object, false);
    by.fetched = now;
    by.lastError = null;
    return true;
  }

  /** As the API server's versioner; an unparseable version counts as 0, like the kubelet's ignored error. */
  private static long version(HasMetadata object) {
    try {
      return Long.parseLong(object.getMetadata().getResourceVersion());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** Why the copy served may be out of date, if it may; {@code storeClosed} as for {@link #state}. */
  synchronized Optional<String> staleness(boolean storeClosed) {
    if (immutableCopy != null) {
      return Optional.empty();
    }
    if (!running) {
      return Optional.of(storeClosed ? "its watch is stopped (the store is closed)"
          : "its watch is idle (not read for a while); the next get starts it again");
    }
    if (lastError != null) {
      return Optional.of((resourceVersion == null ? "its list fails: " : "its watch is down: ")
          + ApiServerErrors.reason(lastError));
    }
    return snapshot == null ? Optional.of("not synced yet") : Optional.empty();
  }

  /** What the item does now; {@code storeClosed} tells a stop by shutdown from a stop for idleness. */
  synchronized ObjectState state(boolean storeClosed) {
    Snapshot<T> current = snapshot;
    if (current != null && current.fromDisk()) {
      return ObjectState.FROM_DISK;
    }
    if (immutableCopy != null) {
      return ObjectState.IMMUTABLE;
    }
    if (polled != null || handover != null) {
      return ObjectState.POLLED; // also while a watch that replaces the polling has not delivered yet
    }
    if (running) {
      return ObjectState.RUNNING;
    }
    return storeClosed ? ObjectState.STOPPED : ObjectState.IDLE;
  }

  /**
   * Keeps the copy of an immutable object and ends the cycle; the caller closes the reflector ({@link #takeReflector()}).
   *
   * @return true the first time
   */
  synchronized boolean makeImmutable(T object) {
    if (immutableCopy != null) {
      return false;
    }
    immutableCopy = object;
    running = false;
    polled = null;
    handover = null;
    run++;
    snapshot = new Snapshot<>(object, true);
    return true;
  }

  /** The reflector of a stopped cycle, for the caller to close outside this lock. */
  synchronized Reflector<T> takeReflector() {
    Reflector<T> taken = reflector;
    reflector = null;
    return taken;
  }

  /** A pod registered with this item: an immutable copy must be checked before it is served again. */
  synchronized void requestVerification() {
    if (immutableCopy != null) {
      verify = true;
      snapshot = new Snapshot<>(immutableCopy, false);
    }
  }

  /** The UID of the immutable copy awaiting verification, or null if there is nothing to verify. */
  synchronized String uidToVerify() {
    return verify && immutableCopy != null ? immutableCopy.getMetadata().getUid() : null;
  }

  /**
   * The outcome of a verification: the same UID keeps the copy; otherwise the object was deleted (and maybe
   * re-created) and the item becomes an ordinary mutable one, not initialized.
   *
   * @return true if the copy was dropped
   */
  synchronized boolean verified(String verifiedUid, String liveUid) {
    if (immutableCopy == null || !verifiedUid.equals(immutableCopy.getMetadata().getUid())) {
      return false; // another get verified it meanwhile
    }
    verify = false;
    if (verifiedUid.equals(liveUid)) {
      snapshot = new Snapshot<>(immutableCopy, true);
      return false;
    }
    immutableCopy = null;
    snapshot = null;
    return true;
  }

}
