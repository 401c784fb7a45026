package dev.nodelet.controller;

import java.time.Duration;
import java.util.List;

/** The longest delay of several limiters; every limiter counts every item. */
final class MaxOfRateLimiter<T> implements RateLimiter<T> {

  private final List<RateLimiter<T>> limiters;

  MaxOfRateLimiter(RateLimiter<T>[] limiters) {
    if (limiters.length == 0) {
      throw new IllegalArgumentException("maxOf needs at least one rate limiter");
    }
    this.limiters = List.of(limiters);
  }

  @Override
  public Duration when(T item) {
    Duration longest = Duration.ZERO;
    for (RateLimiter<T> limiter : limiters) {
      Duration d = limiter.when(item);
      if (d.compareTo(longest) > 0) {
        longest = d;
      }
    }
    return longest;
  }

  @Override
  public void forget(T item) {
    limiters.forEach(l -> l.forget(item));
  }

  @Override
  public int numRequeues(T item) {
    int most = 0;
    for (RateLimiter<T> limiter : limiters) {
      most = Math.max(most, limiter.numRequeues(item));
    }
    return most;
  }
}
