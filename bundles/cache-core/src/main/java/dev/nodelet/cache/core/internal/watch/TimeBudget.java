package dev.nodelet.cache.core.internal.watch;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * The time the dispatcher may spend waiting for full watchers (the apiserver's {@code timeBudget}): it starts empty,
 * grows by {@code refillPerSecond} for every second of the clock up to {@code max}, is taken whole before a blocking
 * round and gets back what the round did not use.
 *
 * <p>Refill follows the injected clock so tests can drive it; the time a round used is measured by the caller on the
 * monotonic clock, because the wait itself is real. Thread-safe.
 */
final class TimeBudget {

  private final Clock clock;
  private final long maxNanos;
  private final double refillNanosPerSecond;

  // guarded by this
  private long budgetNanos;
  private Instant last;

  TimeBudget(Clock clock, Duration max, Duration refillPerSecond) {
    this.clock = clock;
    this.maxNanos = max.toNanos();
    this.refillNanosPerSecond = refillPerSecond.toNanos();
    this.last = clock.instant();
  }

  /** @return the whole budget available now, in nanoseconds; the budget is empty afterwards */
  synchronized long takeAvailable() {
    Instant now = clock.instant();
    double elapsedSeconds = Math.max(0, Duration.between(last, now).toNanos() / 1e9);
    budgetNanos = (long) Math.min(maxNanos, budgetNanos + elapsedSeconds * refillNanosPerSecond);
    last = now;
    long available = budgetNanos;
    budgetNanos = 0;
    return available;
  }

  /** @param unusedNanos what a round did not use; nothing if it overran */
  synchronized void returnUnused(long unusedNanos) {
    if (unusedNanos > 0) {
      budgetNanos = Math.min(maxNanos, budgetNanos + unusedNanos);
    }
  }
}
