package dev.nodelet.store.watch.internal;

import dev.nodelet.cache.core.ApiServerErrors;
import dev.nodelet.objectcache.ObjectState;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Why the copy of a polled item may be out of date, as the TTL store tells it, and whether that only means the next
 * get fetches it: a fresh copy is as fresh as the TTL strategy's ({@link ObjectState#POLLED} says it is polled); one
 * older than the time-to-live, or none fetched yet, is fetched by the next get; a failed fetch or a closed store is a
 * failure.
 *
 * @param reason why the copy may be out of date; empty if it is fresh
 * @param refreshedOnNextGet true if the copy is stale only for its age: the next get fetches it
 */
record PolledStaleness(Optional<String> reason, boolean refreshedOnNextGet) {

  private static final PolledStaleness FRESH = new PolledStaleness(Optional.empty(), false);

  /**
   * @param polled the item's polling
   * @param fromDisk whether the copy held is the one a previous run stored, which a failing fetch would serve
   * @param settings the store's options: the budget and the time-to-live
   * @param now the clock's millis
   * @param storeClosed whether the store is closed, so that gets no longer fetch
   */
  static PolledStaleness of(WatchItem.Polled polled, boolean fromDisk, WatchSettings settings, long now,
      boolean storeClosed) {
    String why = "polled, not watched (the watch budget of " + settings.budget().max() + " is spent): ";
    if (storeClosed) {
      return failing(why + "the store is closed");
    }
    Throwable error = polled.lastError;
    if (error != null) {
      return failing(why + "its last fetch failed: " + ApiServerErrors.reason(error));
    }
    Duration ttl = settings.polledTtl().get();
    long fetched;
    synchronized (polled) {
      fetched = polled.fetched;
    }
    if (fetched < 0) {
      return new PolledStaleness(Optional.of(why + "not fetched yet; the next get fetches it"), !fromDisk);
    }
    if (now - fetched >= ttl.toMillis()) {
      return new PolledStaleness(Optional.of(why + "its TTL of " + ttl.toSeconds() + " s expired (fetched "
          + Instant.ofEpochMilli(fetched) + "); the next get fetches it again"), !fromDisk);
    }
    return FRESH;
  }

  private static PolledStaleness failing(String reason) {
    return new PolledStaleness(Optional.of(reason), false);
  }
}
