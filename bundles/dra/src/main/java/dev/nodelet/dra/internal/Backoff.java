package dev.nodelet.dra.internal;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * client-go's {@code flowcontrol.Backoff} with jitter for one item, as the kubelet uses it between attempts to
 * monitor a driver. {@link #get()} is zero until the first {@link #next}; the first value is
 * {@code initial + jitter} and is not capped; later values are {@code min(2 × previous + jitter, max)}, where jitter
 * is {@code random × jitterFactor × previous}. An entry untouched for more than {@code 2 × max} starts over.
 */
final class Backoff {

  private final long initialNanos;
  private final long maxNanos;
  private final double jitterFactor;
  private final DoubleSupplier random;
  private boolean started;
  private long backoffNanos;
  private long lastUpdate;

  Backoff(Duration initial, Duration max, double jitterFactor, DoubleSupplier random) {
    if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0 || jitterFactor < 0) {
      throw new IllegalArgumentException("invalid backoff: initial " + initial + ", max " + max + ", jitter factor "
          + jitterFactor);
    }
    this.initialNanos = initial.toNanos();
    this.maxNanos = max.toNanos();
    this.jitterFactor = jitterFactor;
    this.random = random;
  }

  /** The current delay; zero before the first {@link #next}. */
  synchronized Duration get() {
    return Duration.ofNanos(started ? backoffNanos : 0);
  }

  /** Moves to the next delay after a failure at {@code nowNanos}. */
  synchronized void next(long nowNanos) {
    if (!started || nowNanos - lastUpdate > 2 * maxNanos) {
      backoffNanos = initialNanos + jitter(initialNanos);
    } else {
      backoffNanos = Math.min(2 * backoffNanos + jitter(backoffNanos), maxNanos);
    }
    started = true;
    lastUpdate = nowNanos;
  }

  private long jitter(long nanos) {
    return (long) (random.getAsDouble() * jitterFactor * nanos);
  }
}
