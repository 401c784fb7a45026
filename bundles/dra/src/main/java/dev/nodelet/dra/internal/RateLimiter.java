package dev.nodelet.dra.internal;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * client-go's default controller rate limiter: the larger of a per-item exponential delay (base × 2^failures,
 * capped, reset by {@link #forget}) and an overall token bucket (qps, burst).
 */
final class RateLimiter<T> {

  private final long baseNanos;
  private final long maxNanos;
  private final double qps;
  private final int burst;
  private final LongSupplier nanoTime;
  private final Map<T, Integer> failures = new HashMap<>();
  private double tokens;
  private long lastRefill;

  RateLimiter(Duration baseDelay, Duration maxDelay, double qps, int burst, LongSupplier nanoTime) {
    if (baseDelay.isNegative() || maxDelay.compareTo(baseDelay) < 0 || !(qps > 0) || burst < 1) {
      throw new IllegalArgumentException("invalid rate limits: base " + baseDelay + ", max " + maxDelay + ", qps "
          + qps + ", burst " + burst);
    }
    this.baseNanos = baseDelay.toNanos();
    this.maxNanos = maxDelay.toNanos();
    this.qps = qps;
    this.burst = burst;
    this.nanoTime = nanoTime;
    this.tokens = burst;
    this.lastRefill = nanoTime.getAsLong();
  }

  /** How long to wait before {@code item} is processed again; counts one more failure of the item. */
  synchronized Duration when(T item) {
    int exponent = failures.merge(item, 1, Integer::sum) - 1;
    double itemDelay = baseNanos * Math.pow(2, exponent);
    long perItem = itemDelay >= maxNanos ? maxNanos : (long) itemDelay;
    return Duration.ofNanos(Math.max(perItem, reserveToken()));
  }

  /** The item succeeded: its next failure starts at the base delay again. */
  synchronized void forget(T item) {
    failures.remove(item);
  }

  synchronized int failures(T item) {
    return failures.getOrDefault(item, 0);
  }

  /** Takes one token (the count may go negative) and returns the wait until it is covered, as x/time/rate does. */
  private long reserveToken() {
    long now = nanoTime.getAsLong();
    tokens = Math.min(burst, tokens + (now - lastRefill) / 1e9 * qps);
    lastRefill = now;
    tokens -= 1;
    return tokens >= 0 ? 0 : (long) Math.ceil(-tokens / qps * 1e9);
  }
}
