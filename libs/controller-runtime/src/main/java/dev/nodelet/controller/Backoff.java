package dev.nodelet.controller;

import java.time.Duration;
import java.util.Objects;
import java.util.function.DoubleSupplier;

/**
 * An exponential back-off for one item: the first failure waits {@code initial}, each further one twice the delay
 * before, at most {@code max}; {@link #reset()} after a success starts over. Times are monotonic nanoseconds from the
 * caller's {@link Scheduler#nanoTime()}, so a {@link DrivableScheduler} drives it. Options, from the kubelet:
 *
 * <ul>
 *   <li>{@link Builder#jitter jitter}, client-go's {@code flowcontrol.Backoff}: the first delay is
 *       {@code initial + jitter} and is not capped, later ones {@code min(2 × previous + jitter, max)}, where jitter
 *       is {@code random × factor × previous};</li>
 *   <li>{@link Builder#jitterUpperHalf jitterUpperHalf}: the delays double from {@code initial} to {@code max}
 *       without jitter, and each wait is drawn from the upper half of its delay, {@code d/2 + random × d/2}: never
 *       longer than {@code max}, never in step with other items (the reflectors' retry);</li>
 *   <li>{@link Builder#forgetAfterIdle forgetAfterIdle}: an item without a failure for longer starts over (client-go
 *       forgets after {@code 2 × max}), so a stream that breaks after a long healthy period is retried soon;</li>
 *   <li>{@link Builder#resetAfterRunning resetAfterRunning}: the kubelet's crash back-off, a container that ran at
 *       least this long before it failed starts over at {@code initial}.</li>
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class Backoff {

  private final long initialNanos;
  private final long maxNanos;
  private final double jitterFactor;
  private final boolean upperHalf;
  private final DoubleSupplier random;
  private final long idleNanos; // Long.MAX_VALUE: never forgotten
  private final Duration resetAfterRunning; // null: no such reset
  private int failures; // guarded by this
  private long delayNanos; // guarded by this: the delay of the last failure, before an upper-half draw
  private long waitNanos; // guarded by this: the wait of the last failure, as failed() returned it
  private long lastFailure; // guarded by this

  private Backoff(Builder b) {
    this.initialNanos = b.initial.toNanos();
    this.maxNanos = b.max.toNanos();
    this.jitterFactor = b.jitterFactor;
    this.upperHalf = b.upperHalf;
    this.random = b.random;
    this.idleNanos = b.idle == null ? Long.MAX_VALUE : b.idle.toNanos();
    this.resetAfterRunning = b.resetAfterRunning;
  }

  /**
   * A back-off from {@code initial} doubling to {@code max}.
   *
   * @throws IllegalArgumentException if {@code initial} is not positive or {@code max} is below it
   */
  public static Builder exponential(Duration initial, Duration max) {
    return new Builder(initial, max);
  }

  /** {@code base × 2^exponent}, at most {@code max}, without overflow: the figure of every doubling here. */
  public static Duration doubled(Duration base, int exponent, Duration max) {
    if (exponent < 0) {
      throw new IllegalArgumentException("exponent must not be negative: " + exponent);
    }
    double nanos = base.toNanos() * Math.pow(2, exponent);
    return nanos >= max.toNanos() ? max : Duration.ofNanos((long) nanos);
  }

  /** A failure at {@code nowNanos}; returns the delay before the next attempt. */
  public Duration failed(long nowNanos) {
    return failed(nowNanos, Duration.ZERO);
  }

  /**
   * A failure at {@code nowNanos} of something that had run for {@code ranFor} ({@link Duration#ZERO} for a failure to
   * start); returns the delay before the next attempt.
   */
  public synchronized Duration failed(long nowNanos, Duration ranFor) {
    boolean startOver = failures == 0 || idle(nowNanos)
        || (resetAfterRunning != null && ranFor.compareTo(resetAfterRunning) >= 0);
    if (startOver) {
      failures = 1;
      delayNanos = initialNanos + jitter(initialNanos);
    } else {
      failures++;
      long doubled = delayNanos > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : 2 * delayNanos;
      delayNanos = Math.min(saturatedAdd(doubled, jitter(delayNanos)), maxNanos);
    }
    // the upper-half draw is not fed back into the doubling: the delays stay initial × 2^n
    waitNanos = upperHalf ? delayNanos / 2 + (long) (random.getAsDouble() * (delayNanos / 2)) : delayNanos;
    lastFailure = nowNanos;
    return Duration.ofNanos(waitNanos);
  }

  /** The delay of the last failure; zero without one, after {@link #reset()} and once forgotten for idleness. */
  public synchronized Duration delay(long nowNanos) {
    return Duration.ofNanos(failures == 0 || idle(nowNanos) ? 0 : waitNanos);
  }

  /** How long the next attempt must still wait at {@code nowNanos}; zero when it may go. */
  public synchronized Duration remaining(long nowNanos) {
    if (failures == 0) {
      return Duration.ZERO;
    }
    return Duration.ofNanos(Math.max(0, lastFailure + waitNanos - nowNanos));
  }

  /** True while the next attempt must wait. */
  public boolean waiting(long nowNanos) {
    return !remaining(nowNanos).isZero();
  }

  /** When the next attempt may go, in the caller's nanoseconds; only meaningful while {@link #failures()} > 0. */
  public synchronized long notBeforeNanos() {
    return lastFailure + waitNanos;
  }

  /** The failures since the start or the last {@link #reset()}. */
  public synchronized int failures() {
    return failures;
  }

  /** A success: the next failure waits {@code initial} again. */
  public synchronized void reset() {
    failures = 0;
    delayNanos = 0;
    waitNanos = 0;
  }

  /** The longest delay. */
  public Duration max() {
    return Duration.ofNanos(maxNanos);
  }

  private boolean idle(long nowNanos) {
    return nowNanos - lastFailure > idleNanos;
  }

  private long jitter(long nanos) {
    return jitterFactor == 0 ? 0 : (long) (random.getAsDouble() * jitterFactor * nanos);
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }

  /** Configures a {@link Backoff}. */
  public static final class Builder {
    private final Duration initial;
    private final Duration max;
    private double jitterFactor;
    private boolean upperHalf;
    private DoubleSupplier random = () -> 0;
    private Duration idle;
    private Duration resetAfterRunning;

    private Builder(Duration initial, Duration max) {
      Objects.requireNonNull(initial, "initial");
      Objects.requireNonNull(max, "max");
      if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
        throw new IllegalArgumentException("invalid back-off: the initial delay must be positive and at most the"
            + " maximum, was initial " + initial + ", max " + max);
      }
      this.initial = initial;
      this.max = max;
    }

    /**
     * Adds {@code random × factor × previous delay} to each delay; {@code random} gives values in [0, 1). Replaces
     * {@link #jitterUpperHalf}.
     */
    public Builder jitter(double factor, DoubleSupplier random) {
      if (!(factor >= 0)) {
        throw new IllegalArgumentException("the jitter factor must not be negative, was " + factor);
      }
      this.jitterFactor = factor;
      this.upperHalf = false;
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /**
     * Waits {@code d/2 + random × d/2} for a delay {@code d} that doubles from {@code initial} to {@code max}
     * without jitter; {@code random} gives values in [0, 1). Replaces {@link #jitter}.
     */
    public Builder jitterUpperHalf(DoubleSupplier random) {
      this.jitterFactor = 0;
      this.upperHalf = true;
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /** An item without a failure for longer than {@code idle} starts over. */
    public Builder forgetAfterIdle(Duration idle) {
      if (idle.isNegative()) {
        throw new IllegalArgumentException("the idle time must not be negative, was " + idle);
      }
      this.idle = idle;
      return this;
    }

    /** A failure of something that ran at least {@code ranFor} starts over at the initial delay. */
    public Builder resetAfterRunning(Duration ranFor) {
      if (ranFor.isNegative() || ranFor.isZero()) {
        throw new IllegalArgumentException("the running time that resets the back-off must be positive, was "
            + ranFor);
      }
      this.resetAfterRunning = ranFor;
      return this;
    }

    public Backoff build() {
      return new Backoff(this);
    }
  }
}
