package dev.nodelet.controller;

import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * client-go's {@code workqueue.TypedRateLimiter}: how long an item waits before it is processed again. The
 * implementations are thread-safe.
 *
 * @param <T> the item type
 */
public interface RateLimiter<T> {

  /** How long {@code item} waits before it is processed again; counts one more requeue of it. */
  Duration when(T item);

  /** The item succeeded: the limiter stops tracking it, so its next failure starts from the base delay. */
  void forget(T item);

  /** How often the item was requeued since it was last forgotten. */
  int numRequeues(T item);

  /** client-go's {@code ItemExponentialFailureRateLimiter}: {@code base × 2^requeues}, at most {@code max}. */
  static <T> RateLimiter<T> itemExponential(Duration base, Duration max) {
    return new ItemExponentialRateLimiter<>(base, max);
  }

  /**
   * client-go's {@code BucketRateLimiter}: a token bucket of {@code burst} tokens refilled at {@code qps}, shared by
   * all items; time from {@code nanoTime} (a {@link Scheduler}'s).
   */
  static <T> RateLimiter<T> bucket(double qps, int burst, LongSupplier nanoTime) {
    return new BucketRateLimiter<>(qps, burst, nanoTime);
  }

  /** client-go's {@code MaxOfRateLimiter}: the longest delay of the given limiters; each counts every item. */
  @SafeVarargs
  static <T> RateLimiter<T> maxOf(RateLimiter<T>... limiters) {
    return new MaxOfRateLimiter<>(limiters);
  }

  /**
   * client-go's {@code DefaultControllerRateLimiter} with the given figures: the larger of a per-item exponential
   * delay and an overall token bucket. client-go's own are 5 ms, 1000 s, 10 qps, burst 100.
   */
  static <T> RateLimiter<T> controller(Duration baseDelay, Duration maxDelay, double qps, int burst,
      LongSupplier nanoTime) {
    Objects.requireNonNull(nanoTime, "nanoTime");
    return maxOf(itemExponential(baseDelay, maxDelay), bucket(qps, burst, nanoTime));
  }
}
