package dev.nodelet.controller;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * One token bucket for all items ({@code golang.org/x/time/rate} as client-go uses it): each {@link #when} takes a
 * token, the count may go negative, and the wait is the time until the refill covers it.
 */
final class BucketRateLimiter<T> implements RateLimiter<T> {

  private final double qps;
  private final int burst;
  private final LongSupplier nanoTime;
  private double tokens; // guarded by this
  private long lastRefill; // guarded by this

  BucketRateLimiter(double qps, int burst, LongSupplier nanoTime) {
    if (!(qps > 0) || burst < 1) {
      throw new IllegalArgumentException("invalid overall rate limit: qps must be positive and burst at least 1,"
          + " was qps " + qps + ", burst " + burst);
    }
    this.qps = qps;
    this.burst = burst;
    this.nanoTime = nanoTime;
    this.tokens = burst;
    this.lastRefill = nanoTime.getAsLong();
  }

  @Override
  public synchronized Duration when(T item) {
    long now = nanoTime.getAsLong();
    tokens = Math.min(burst, tokens + (now - lastRefill) / 1e9 * qps);
    lastRefill = now;
    tokens -= 1;
    return Duration.ofNanos(tokens >= 0 ? 0 : (long) Math.ceil(-tokens / qps * 1e9));
  }

  @Override
  public void forget(T item) {
    // the bucket is shared: nothing is kept per item
  }

  @Override
  public int numRequeues(T item) {
    return 0;
  }
}
