package dev.nodelet.dra.runtime;

import dev.nodelet.controller.DrivableScheduler;
import java.time.Duration;
import java.util.List;

/**
 * A {@link Scheduler} whose time moves only in {@link #advance}; due tasks run on the calling thread. For tests that
 * drive the controller's retries, rate limits and grace periods without waiting.
 */
public final class ManualScheduler implements Scheduler {

  private final DrivableScheduler time = new DrivableScheduler();

  @Override
  public long nanoTime() {
    return time.nanoTime();
  }

  @Override
  public Task schedule(Runnable task, Duration delay) {
    return time.schedule(task, delay)::cancel;
  }

  /** Moves time forward, running every task that falls due, in order of due time. */
  public void advance(Duration step) {
    time.advance(step);
  }

  /** The delays from now of the pending tasks, soonest first. */
  public List<Duration> pendingDelays() {
    return time.pendingDelays();
  }
}
