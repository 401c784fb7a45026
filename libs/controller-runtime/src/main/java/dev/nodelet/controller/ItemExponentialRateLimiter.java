package dev.nodelet.controller;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/** Per item {@code base × 2^requeues}, at most {@code max}; {@link #forget} starts the item over. */
final class ItemExponentialRateLimiter<T> implements RateLimiter<T> {

  private final Duration base;
  private final Duration max;
  private final Map<T, Integer> requeues = new HashMap<>(); // guarded by this

  ItemExponentialRateLimiter(Duration base, Duration max) {
    if (base.isNegative() || max.compareTo(base) < 0) {
      throw new IllegalArgumentException("invalid per-item rate limit: the base delay must not be negative and at"
          + " most the maximum, was base " + base + ", max " + max);
    }
    this.base = base;
    this.max = max;
  }

  @Override
  public synchronized Duration when(T item) {
    int exponent = requeues.merge(item, 1, Integer::sum) - 1;
    return Backoff.doubled(base, exponent, max);
  }

  @Override
  public synchronized void forget(T item) {
    requeues.remove(item);
  }

  @Override
  public synchronized int numRequeues(T item) {
    return requeues.getOrDefault(item, 0);
  }
}
