package dev.nodelet.dra.claims.internal;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The times the claim manager must sync again without an event: the next retry of a failed step, and the next
 * health lease expiry (a device turns Unknown in its pods' status then, not at the driver's next report). Touched
 * by the claim manager's thread only.
 */
final class WakeUps {

  private final Clock clock;
  private final ScheduledExecutorService executor;
  private final Runnable sync;
  private ScheduledFuture<?> expiry;
  private Instant expiryAt;

  WakeUps(Clock clock, ScheduledExecutorService executor, Runnable sync) {
    this.clock = clock;
    this.executor = executor;
    this.sync = sync;
  }

  void retryAt(Optional<Instant> next) {
    next.ifPresent(at -> schedule(at, 0));
  }

  void expiryAt(Optional<Instant> next) {
    if (next.isEmpty() || next.get().equals(expiryAt)) {
      return;
    }
    if (expiry != null) {
      expiry.cancel(false);
    }
    expiryAt = next.get();
    expiry = schedule(expiryAt, 1); // Unknown once past the lease
  }

  private ScheduledFuture<?> schedule(Instant at, long extraMillis) {
    long delay = Math.max(0, Duration.between(clock.instant(), at).toMillis()) + extraMillis;
    try {
      return executor.schedule(sync, delay, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      return null; // closed
    }
  }
}
