package dev.nodelet.node.internal;

import java.time.Duration;

/** Delayed tasks for the node's loops; tests give one whose time they drive. */
@FunctionalInterface
interface Timer {

  /**
   * Runs {@code task} once after {@code delay}.
   *
   * @return what cancels it, if it has not started
   */
  Cancellable schedule(Runnable task, Duration delay);

  /** A scheduled task. */
  @FunctionalInterface
  interface Cancellable {
    void cancel();
  }
}
