package dev.nodelet.dra.internal;

import java.time.Duration;
import java.util.function.DoubleSupplier;

/**
 * client-go's {@code flowcontrol.Backoff} with jitter for one item, as the kubelet uses it between attempts to
 * monitor a driver. {@link #get()} is zero until the first {@link #next}; the first value is
 * {@code initial + jitter} and is not capped; later values are {@code min(2 × previous + jitter, max)}, where jitter
 * is {@code random × jitterFactor × previous}. An entry untouched for more than {@code 2 × max} starts over: its
 * delay reads as zero again, so a stream that breaks after a long healthy period is retried at once.
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

  /** The current delay at {@code nowNanos}; zero before the first {@link #next} and once the entry expired. */
  synchronized Duration get(long nowNanos) {
    return Duration.ofNanos(started && !expired(nowNanos) ? backoffNanos : 0);
  }

  /** Moves to the next delay after a failure at {@code nowNanos}. */
  synchronized void next(long nowNanos) {
    if (!started || expired(nowNanos)) {
      backoffNanos = initialNanos + jitter(initialNanos);
    } else {
      backoffNanos = Math.min(2 * backoffNanos + jitter(backoffNanos), maxNanos);
    }
    started = true;
    lastUpdate = nowNanos;
  }

  private boolean expired(long nowNanos) {
    return nowNanos - lastUpdate > 2 * maxNanos;
  }

  private long jitter(long nanos) {
    return (long) (random.getAsDouble() * jitterFactor * nanos);
  }
}
