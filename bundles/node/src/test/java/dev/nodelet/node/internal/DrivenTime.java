package dev.nodelet.node.internal;

import dev.nodelet.controller.DrivableScheduler;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;

/**
 * Time the test moves: the controller runtime's {@link DrivableScheduler} as the node's {@link Timer}, and a
 * {@link Clock} that reads the same time, so that what runs when and the times it writes agree.
 */
final class DrivenTime extends Clock {

  static final Instant START = Instant.parse("2026-11-28T10:00:00Z");

  private final DrivableScheduler scheduler = new DrivableScheduler();
  private final long origin = scheduler.nanoTime();

  /** The timer to give the agent. */
  Timer timer() {
    return (task, delay) -> scheduler.schedule(task, delay)::cancel;
  }

  /** Moves time on, running what falls due on this thread. */
  void advance(Duration step) {
    scheduler.advance(step);
  }

  /** Runs what is due now. */
  void runDue() {
    scheduler.advance(Duration.ZERO);
  }

  /** The delays of the pending tasks, soonest first. */
  List<Duration> pending() {
    return scheduler.pendingDelays();
  }

  @Override
  public Instant instant() {
    return START.plusNanos(scheduler.nanoTime() - origin);
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException("UTC only");
  }
}
