package dev.nodelet.pods.internal;

import java.time.Duration;
import java.time.Instant;

/**
 * The kubelet's back-off for one container, for restarts and for image pulls: 10 s before the first retry,
 * doubling to at most 5 minutes; a container that ran for 10 minutes starts again at 10 s. Not thread-safe: used on
 * the pods' executor only.
 */
final class Backoff {

  static final Duration INITIAL = Duration.ofSeconds(10);
  static final Duration MAX = Duration.ofMinutes(5);
  static final Duration RESET_AFTER = Duration.ofMinutes(10);

  private Duration delay; // null: no failure yet
  private Instant until = Instant.MIN;

  /**
   * A failure: the next retry waits the next delay.
   *
   * @param now when it failed
   * @param ranFor how long the container ran before it ended; {@link Duration#ZERO} for a failure to start or pull
   * @return when the retry may happen
   */
  Instant failed(Instant now, Duration ranFor) {
    if (delay == null || ranFor.compareTo(RESET_AFTER) >= 0) {
      delay = INITIAL;
    } else {
      delay = delay.multipliedBy(2).compareTo(MAX) > 0 ? MAX : delay.multipliedBy(2);
    }
    until = now.plus(delay);
    return until;
  }

  /** @return true while a retry must wait */
  boolean waiting(Instant now) {
    return now.isBefore(until);
  }

  /** @return when the retry may happen; {@link Instant#MIN} without a failure */
  Instant until() {
    return until;
  }

  /** @return the delay of the last failure; null without one */
  Duration delay() {
    return delay;
  }

  /** Forgets the failures (an image that was pulled). */
  void reset() {
    delay = null;
    until = Instant.MIN;
  }
}
