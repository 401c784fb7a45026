package dev.nodelet.dra.runtime;

import java.time.Duration;

/** Time for the controller: a monotonic clock and delayed tasks, so tests can drive both. */
public interface Scheduler {

  /** A monotonic time in nanoseconds, as {@link System#nanoTime()}. */
  long nanoTime();

  /** Runs {@code task} once after {@code delay} (at once for zero or less) on a thread of the scheduler. */
  Task schedule(Runnable task, Duration delay);

  /** A scheduled task. */
  interface Task {
    /** Keeps the task from running if it has not started yet; idempotent. */
    void cancel();
  }
}
