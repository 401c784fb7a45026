package dev.nodelet.kube.internal.watch;

import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * The token bucket that every re-establishment of a watch goes through (the generic cell rate algorithm, one
 * timestamp instead of a token count). A restart reserves a slot first ({@link #reserve}): reservations never
 * fail; each gets the delay after which it conforms, plus a jitter within its own slot, so that a burst of restarts
 * is spread instead of synchronised. Over any window of {@code w} seconds at most {@code burst + rate * w + 1}
 * reservations start.
 *
 * <p>A reserved start can run later than its slot (a busy callback pool, a slow timer, a transport waiting for a
 * connection); late starts that then go out together would exceed the bucket. So each start is checked again when
 * its request actually starts, against the same rate and burst counted over the starts made ({@link #tryStart()}):
 * a transport that holds requests asks this itself; otherwise the reflector asks right before sending.
 *
 * <p>Not the controller runtime's {@code RateLimiter.bucket}: that one takes its token now, whereas a restart after
 * its backoff must take its slot when it starts (else restarts reserved at different times with different backoffs
 * would start together beyond the burst), and {@link #tryStart()} must be able to refuse without taking one.
 */
final class RestartLimiter implements StartGate {

  private final long intervalNanos;
  private final long toleranceNanos;
  private final LongSupplier nanoTime;
  private final DoubleSupplier random;
  private final Runnable onStart;
  private boolean used; // guarded by this
  private long theoreticalArrival; // guarded by this
  private long reservations; // guarded by this
  private boolean anyStarted; // guarded by this
  private long startArrival; // guarded by this: the theoretical arrival time over the starts actually made
  private long refused; // guarded by this
  private long started; // guarded by this

  RestartLimiter(double ratePerSecond, int burst, LongSupplier nanoTime, DoubleSupplier random) {
    this(ratePerSecond, burst, nanoTime, random, () -> { });
  }

  /** @param onStart told of each start taken, outside the bucket's lock (a metric's counter) */
  RestartLimiter(double ratePerSecond, int burst, LongSupplier nanoTime, DoubleSupplier random, Runnable onStart) {
    this.onStart = onStart;
    this.intervalNanos = Math.max(1, (long) (1_000_000_000L / ratePerSecond));
    this.toleranceNanos = (burst - 1) * intervalNanos;
    this.nanoTime = nanoTime;
    this.random = random;
  }

  /**
   * Reserves one start no earlier than {@code minDelayNanos} from now.
   *
   * @return the delay from now, in nanoseconds, after which the caller may start
   */
  long reserve(long minDelayNanos) {
    long now = nanoTime.getAsLong();
    long earliest = now + Math.max(0, minDelayNanos);
    long start;
    synchronized (this) {
      if (!used) {
        used = true;
        theoreticalArrival = earliest;
      }
      start = Math.max(earliest, theoreticalArrival - toleranceNanos);
      theoreticalArrival = Math.max(theoreticalArrival, start) + intervalNanos;
      reservations++;
    }
    long jitter = (long) (random.getAsDouble() * intervalNanos);
    return start - now + jitter;
  }

  /**
   * Takes one start now if the starts made so far leave room for it: the same bucket over start times, with one
   * interval more tolerance for the jitter a reservation adds within its slot.
   *
   * @return 0 if the start was taken; otherwise the delay from now after which one would conform (nothing taken)
   */
  @Override
  public long tryStart() {
    long now = nanoTime.getAsLong();
    synchronized (this) {
      if (!anyStarted) {
        anyStarted = true;
        startArrival = now;
      }
      long conforms = startArrival - toleranceNanos - intervalNanos;
      if (now < conforms) {
        refused++;
        return conforms - now;
      }
      startArrival = Math.max(startArrival, now) + intervalNanos;
      started++;
    }
    onStart.run();
    return 0;
  }

  /** @return how many starts were refused because they would not conform */
  synchronized long refused() {
    return refused;
  }

  /** @return how many starts were taken so far */
  synchronized long started() {
    return started;
  }

  /** @return how many starts were reserved so far */
  synchronized long reservations() {
    return reservations;
  }

  long intervalNanos() {
    return intervalNanos;
  }
}
