package dev.nodelet.controller;

import java.time.Duration;

/**
 * Time for a controller: a monotonic clock and delayed tasks, so that tests can drive both
 * ({@link DrivableScheduler}); {@link ExecutorScheduler} in production.
 */
public interface Scheduler {

  /** A monotonic time in nanoseconds, as {@link System#nanoTime()}. */
  long nanoTime();

  /**
   * Runs {@code task} once after {@code delay} (at once for zero or less) on a thread of the scheduler.
   *
   * @throws java.util.concurrent.RejectedExecutionException once the scheduler is closed
   */
  Task schedule(Runnable task, Duration delay);

  /** A scheduled task. */
  interface Task {
    /** Keeps the task from running if it has not started yet; idempotent. */
    void cancel();
  }
}
