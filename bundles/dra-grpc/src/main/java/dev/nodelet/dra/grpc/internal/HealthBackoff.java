package dev.nodelet.dra.grpc.internal;

import java.time.Duration;

/**
 * When a kubelet plugin that advertised a health service may be asked for health again after it answered
 * "Unimplemented": {@code initial} doubling per answer up to {@code cap}, reset by the first report. Kept per plugin,
 * so a consumer that watches again at once still does not reach the driver before the delay is over.
 */
final class HealthBackoff {

  /** The kubelet's health retry, the first delay. */
  static final Duration INITIAL = Duration.ofSeconds(5);
  static final Duration CAP = Duration.ofMinutes(5);

  private final long initialNanos;
  private final long capNanos;
  private int unimplemented; // guarded by this
  private long notBeforeNanos; // guarded by this
  private boolean logged; // guarded by this

  HealthBackoff(Duration initial, Duration cap) {
    this.initialNanos = initial.toNanos();
    this.capNanos = Math.max(initialNanos, cap.toNanos());
  }

  /** The longest delay. */
  Duration cap() {
    return Duration.ofNanos(capNanos);
  }

  /** How long a call must still wait; zero when none is pending. */
  synchronized long remainingNanos(long nowNanos) {
    return unimplemented == 0 ? 0 : Math.max(0, notBeforeNanos - nowNanos);
  }

  /** The driver answered "Unimplemented"; returns the delay before it is asked again. */
  synchronized long unimplemented(long nowNanos) {
    unimplemented++;
    long delay = capNanos;
    if (unimplemented <= 62 && initialNanos <= capNanos >> (unimplemented - 1)) {
      delay = Math.min(capNanos, initialNanos << (unimplemented - 1));
    }
    notBeforeNanos = nowNanos + delay;
    return delay;
  }

  /** True the first time only: the back-off is logged once per plugin, later answers at DEBUG. */
  synchronized boolean firstLog() {
    boolean first = !logged;
    logged = true;
    return first;
  }

  /** The driver reported health; true if it had answered "Unimplemented" before. */
  synchronized boolean answered() {
    boolean was = unimplemented > 0;
    unimplemented = 0;
    logged = false;
    return was;
  }
}
