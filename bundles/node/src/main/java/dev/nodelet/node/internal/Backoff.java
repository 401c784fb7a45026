package dev.nodelet.node.internal;

import java.time.Duration;

/** A delay that doubles after each failure up to a cap and starts again after a success (not thread-safe). */
final class Backoff {

  private final Duration initial;
  private final Duration max;
  private Duration next;

  Backoff(Duration initial, Duration max) {
    this.initial = initial;
    this.max = max;
    this.next = initial;
  }

  /** @return the delay before the next attempt; the one after is twice as long, at most the cap */
  Duration next() {
    Duration delay = next;
    Duration doubled = next.multipliedBy(2);
    next = doubled.compareTo(max) > 0 ? max : doubled;
    return delay;
  }

  /** After a success: the next failure waits the initial delay again. */
  void reset() {
    next = initial;
  }
}
