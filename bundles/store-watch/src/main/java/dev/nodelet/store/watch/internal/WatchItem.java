package dev.nodelet.store.watch.internal;

import dev.nodelet.objectcache.ObjectState;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * One watched object: its references per pod, its current watch (a single-object informer) and the flags of the
 * kubelet's objectCacheItem. A stopped mutable item is not initialized: the next get waits for a fresh list. An
 * immutable item keeps the copy it saw and needs no watch.
 */
final class WatchItem<T extends HasMetadata> {

  /** References per pod UID; guarded by the owning store's lock. */
  final Map<String, Integer> references = new HashMap<>();

  private final Supplier<SharedIndexInformer<T>> watches;
  private final String cacheKey;

  // guarded by this
  private SharedIndexInformer<T> informer;
  private Instant lastAccess;
  private boolean stopped;
  private T immutableCopy;
  private boolean verify;

  /**
   * @param watches starts a new watch on the object
   * @param cacheKey the object's key in the informer's store
   * @param created the creation time, counted as the first access so that an unread item is idle only after a while
   * @param start whether to start watching now (not during shutdown)
   */
  WatchItem(Supplier<SharedIndexInformer<T>> watches, String cacheKey, Instant created, boolean start) {
    this.watches = watches;
    this.cacheKey = cacheKey;
    this.lastAccess = created;
    if (start) {
      informer = watches.get();
    } else {
      stopped = true;
    }
  }

  synchronized void touch(Instant now) {
    lastAccess = now;
  }

  /** Stops the watch; returns false if it was stopped already. */
  synchronized boolean stop() {
    if (stopped) {
      return false;
    }
    stopped = true;
    if (informer != null) {
      informer.stop();
    }
    return true;
  }

  /** Never stops an item still on its first list: that work would be lost and redone. */
  synchronized boolean stopIfIdle(Instant now, Duration maxIdleTime) {
    if (!stopped && synced() && now.isAfter(lastAccess.plus(maxIdleTime))) {
      return stop();
    }
    return false;
  }

  synchronized void restartIfNeeded() {
    if (immutableCopy != null || !stopped) {
      return;
    }
    informer = watches.get();
    stopped = false;
  }

  /** What the item does now; {@code storeClosed} tells a stop by shutdown from a stop for idleness. */
  synchronized ObjectState state(boolean storeClosed) {
    if (immutableCopy != null) {
      return ObjectState.IMMUTABLE;
    }
    if (!stopped) {
      return ObjectState.RUNNING;
    }
    return storeClosed ? ObjectState.STOPPED : ObjectState.IDLE;
  }

  /** The kubelet's "initialized": the copy of an immutable object, or a running watch that has listed. */
  synchronized boolean synced() {
    return immutableCopy != null || (!stopped && informer != null && informer.hasSynced());
  }

  /** The object as last seen, or null if the API server has none. */
  synchronized Object current() {
    return immutableCopy != null ? immutableCopy : informer.getStore().getByKey(cacheKey);
  }

  /** Keeps the copy and stops watching; returns true the first time. */
  synchronized boolean makeImmutable(T object) {
    if (immutableCopy != null) {
      return false;
    }
    immutableCopy = object;
    stop();
    return true;
  }

  /** A pod registered with this item: an immutable copy must be checked before it is served again. */
  synchronized void requestVerification() {
    verify = immutableCopy != null;
  }

  /** The UID of the immutable copy awaiting verification, or null if there is nothing to verify. */
  synchronized String uidToVerify() {
    return verify && immutableCopy != null ? immutableCopy.getMetadata().getUid() : null;
  }

  /**
   * The outcome of a verification: the same UID keeps the copy; otherwise the object was deleted (and maybe
   * re-created) and the item becomes an ordinary mutable one, watched again unless the store has shut down.
   */
  synchronized boolean verified(String verifiedUid, String liveUid, boolean restart) {
    if (immutableCopy == null || !verifiedUid.equals(immutableCopy.getMetadata().getUid())) {
      return false; // another get verified it meanwhile
    }
    verify = false;
    if (verifiedUid.equals(liveUid)) {
      return false;
    }
    immutableCopy = null;
    if (restart) {
      restartIfNeeded();
    }
    return true;
  }
}
