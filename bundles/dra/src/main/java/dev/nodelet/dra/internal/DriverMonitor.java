package dev.nodelet.dra.internal;

import dev.nodelet.controller.Backoff;
import dev.nodelet.controller.Scheduler;
import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.SnapshotListener;
import dev.nodelet.dra.Subscription;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the snapshot stream of one registration of a driver (the kubelet's {@code monitorPlugin}): retryable
 * errors subscribe again after the {@link Backoff}; a non-retryable error or a clean end stops monitoring until the
 * driver is registered again. Callbacks of an earlier attempt, or after {@link #cancel()}, are ignored.
 *
 * <p>A dead driver fails every attempt: the first failure after a snapshot is one WARN line, the ones after it one
 * DEBUG line each, and the stack trace is logged at DEBUG only.
 */
final class DriverMonitor {

  private static final Logger LOG = LoggerFactory.getLogger(DriverMonitor.class);

  /** Where a monitor reports; called without the monitor's lock held. */
  interface Sink {
    void snapshot(DriverMonitor monitor, List<Pool> pools);

    void ended(DriverMonitor monitor);

    /** The stream failed; with {@code retryable} the monitor subscribes again after its backoff. */
    void failed(DriverMonitor monitor, Throwable cause, boolean retryable);
  }

  private final DeviceSnapshots driver;
  private final String driverName;
  private final Scheduler scheduler;
  private final Backoff backoff;
  private final Sink sink;
  private final Object lock = new Object();
  private int attempt; // guarded by lock: the attempt whose listener is current
  private boolean stopped; // guarded by lock
  private Subscription subscription; // guarded by lock
  private Scheduler.Task retry; // guarded by lock
  private Duration retryDelay; // guarded by lock: the delay of the pending retry, null when none is pending
  private int failuresInARow; // guarded by lock: retryable failures since the last snapshot

  DriverMonitor(DeviceSnapshots driver, String driverName, Scheduler scheduler, Backoff backoff, Sink sink) {
    this.driver = driver;
    this.driverName = driverName;
    this.scheduler = scheduler;
    this.backoff = backoff;
    this.sink = sink;
  }

  DeviceSnapshots driver() {
    return driver;
  }

  String driverName() {
    return driverName;
  }

  /** What the monitor does now: monitoring, backing off before a retry, or stopped. */
  DriverStatus.State state() {
    synchronized (lock) {
      if (stopped) {
        return DriverStatus.State.STOPPED;
      }
      return retryDelay != null ? DriverStatus.State.BACKING_OFF : DriverStatus.State.MONITORING;
    }
  }

  /** The delay of the pending retry, or else the delay the next retryable error would cause. */
  Duration backoff() {
    synchronized (lock) {
      return retryDelay != null ? retryDelay : backoff.delay(scheduler.nanoTime());
    }
  }

  /** Subscribes (on the calling thread, since subscribe must not block). */
  void start() {
    LOG.info("Starting to monitor the resources of DRA driver {}", driverName);
    subscribe();
  }

  /** Ends the stream and any pending retry; the monitor reports nothing after this. */
  void cancel() {
    Subscription open;
    synchronized (lock) {
      if (stopped) {
        return;
      }
      stopped = true;
      open = subscription;
      subscription = null;
      if (retry != null) {
        retry.cancel();
      }
      retryDelay = null;
    }
    closeQuietly(open);
    LOG.info("Stopped monitoring the resources of DRA driver {}", driverName);
  }

  private void subscribe() {
    Listener listener;
    synchronized (lock) {
      retryDelay = null;
      if (stopped) {
        return;
      }
      listener = new Listener(++attempt);
    }
    Subscription opened;
    try {
      opened = driver.subscribe(listener);
    } catch (RuntimeException e) {
      listener.onError(e, true);
      return;
    }
    synchronized (lock) {
      // the stream may already have ended inside subscribe, or the monitor been cancelled meanwhile
      if (listener.isCurrent()) {
        subscription = opened;
        return;
      }
    }
    closeQuietly(opened);
  }

  private void closeQuietly(Subscription s) {
    if (s == null) {
      return;
    }
    try {
      s.close();
    } catch (RuntimeException e) {
      LOG.warn("Closing the snapshot stream of DRA driver {} failed", driverName, e);
    }
  }

  /** The listener of one attempt. */
  private final class Listener implements SnapshotListener {
    private final int myAttempt;
    private boolean ended; // guarded by lock

    Listener(int myAttempt) {
      this.myAttempt = myAttempt;
    }

    boolean isCurrent() {
      return !stopped && !ended && attempt == myAttempt;
    }

    @Override
    public void onSnapshot(List<Pool> pools) {
      int failedBefore;
      synchronized (lock) {
        if (!isCurrent()) {
          return;
        }
        failedBefore = failuresInARow;
        failuresInARow = 0;
      }
      if (failedBefore > 0) {
        LOG.info("The snapshot stream of DRA driver {} works again after {} failed attempts", driverName,
            failedBefore);
      }
      LOG.debug("DRA driver {} reported {} pools", driverName, pools == null ? 0 : pools.size());
      sink.snapshot(DriverMonitor.this, pools);
    }

    @Override
    public void onError(Throwable cause, boolean retryable) {
      synchronized (lock) {
        if (!isCurrent()) {
          return;
        }
      }
      // reported before the retry is scheduled, so that the error cannot outlive the retry's first snapshot
      sink.failed(DriverMonitor.this, cause, retryable);
      Subscription open;
      Duration delay;
      int failures;
      synchronized (lock) {
        if (!isCurrent()) {
          return; // cancelled meanwhile
        }
        ended = true;
        open = subscription;
        subscription = null;
        if (retryable) {
          long now = scheduler.nanoTime();
          delay = backoff.delay(now); // the kubelet retries the first failure at once
          backoff.failed(now);
          retryDelay = delay;
          retry = scheduler.schedule(DriverMonitor.this::subscribe, delay);
          failures = ++failuresInARow;
        } else {
          stopped = true;
          delay = null;
          failures = 0;
        }
      }
      closeQuietly(open);
      if (delay != null) {
        logFailure(cause, failures, delay);
      } else {
        LOG.info("DRA driver {} does not report resources ({}); monitoring stops until it registers again",
            driverName, String.valueOf(cause));
        sink.ended(DriverMonitor.this);
      }
    }

    private void logFailure(Throwable cause, int failures, Duration delay) {
      String why = cause.getMessage() == null ? cause.toString() : cause.getMessage();
      if (failures == 1) {
        LOG.warn("The snapshot stream of DRA driver {} failed: {}; subscribing again in {} ms (further failures"
            + " until it reports again are logged at DEBUG)", driverName, why, delay.toMillis());
        LOG.debug("The snapshot stream of DRA driver {} failed", driverName, cause);
      } else {
        LOG.debug("The snapshot stream of DRA driver {} failed again ({} attempts in a row): {}; subscribing again"
            + " in {} ms", driverName, failures, why, delay.toMillis(), cause);
      }
    }

    @Override
    public void onCompleted() {
      Subscription open;
      synchronized (lock) {
        if (!isCurrent()) {
          return;
        }
        ended = true;
        stopped = true;
        open = subscription;
        subscription = null;
      }
      closeQuietly(open);
      LOG.info("DRA driver {} closed its snapshot stream; monitoring stops until it registers again", driverName);
      sink.ended(DriverMonitor.this);
    }
  }
}
