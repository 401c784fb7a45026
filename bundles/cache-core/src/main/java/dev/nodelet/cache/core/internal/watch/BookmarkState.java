package dev.nodelet.cache.core.internal.watch;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/** Where a {@link CacheWatcher} stands with the bookmark its client waits for (the end of the initial events). */
enum BookmarkState {
  /** A bookmark at or after the awaited revision has not reached the input yet. */
  WAITING,
  /** It is in the input, not yet in the result: closing now must drain the input so the client gets it. */
  RECEIVED,
  /** It is in the result, or nothing was awaited. */
  SENT;

  /**
   * When the next bookmark is due for a watcher in this state (the apiserver's {@code nextBookmarkTime}).
   *
   * @param deadline when the watch ends; null for never
   * @return at once ({@code now}) while the awaited bookmark has not been received; else {@code now + frequency},
   *     but no later than 2 s before the deadline; empty if that is already past
   */
  Optional<Instant> nextBookmarkTime(Instant now, Duration frequency, Instant deadline) {
    if (this == WAITING) {
      return Optional.of(now);
    }
    Instant heartbeat = now.plus(frequency);
    if (deadline == null) {
      return Optional.of(heartbeat);
    }
    Instant preTimeout = deadline.minusSeconds(2);
    if (preTimeout.isBefore(heartbeat)) {
      heartbeat = preTimeout;
    }
    return heartbeat.isBefore(now) ? Optional.empty() : Optional.of(heartbeat);
  }
}
