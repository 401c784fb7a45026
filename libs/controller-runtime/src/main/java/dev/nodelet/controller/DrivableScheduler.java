package dev.nodelet.controller;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A {@link Scheduler} for tests: time moves only in {@link #advance}, and due tasks run on the calling thread in
 * order of due time (then of scheduling). A task that schedules another task due within the step also runs within
 * it. Retries, rate limits and grace periods are tested this way without waiting.
 */
public final class DrivableScheduler implements Scheduler {

  private final class Scheduled implements Task {
    final long due;
    final long order;
    final Runnable task;

    Scheduled(long due, long order, Runnable task) {
      this.due = due;
      this.order = order;
      this.task = task;
    }

    @Override
    public void cancel() {
      synchronized (DrivableScheduler.this) {
        pending.remove(this);
      }
    }
  }

  private static final Comparator<Scheduled> DUE_ORDER =
      Comparator.<Scheduled>comparingLong(s -> s.due).thenComparingLong(s -> s.order);

  private final List<Scheduled> pending = new ArrayList<>();
  private long now;
  private long sequence;

  /** Starts at one second, so that "zero" is never a time a test meets by accident. */
  public DrivableScheduler() {
    this(1_000_000_000L);
  }

  public DrivableScheduler(long startNanos) {
    this.now = startNanos;
  }

  @Override
  public synchronized long nanoTime() {
    return now;
  }

  @Override
  public synchronized Task schedule(Runnable task, Duration delay) {
    Scheduled scheduled = new Scheduled(now + Math.max(0, delay.toNanos()), sequence++, task);
    pending.add(scheduled);
    return scheduled;
  }

  /** Moves time forward by {@code step}, running every task that falls due, in order of due time. */
  public void advance(Duration step) {
    if (step.isNegative()) {
      throw new IllegalArgumentException("time does not go back: " + step);
    }
    long target;
    synchronized (this) {
      target = now + step.toNanos();
    }
    while (true) {
      Scheduled next;
      synchronized (this) {
        next = pending.stream().filter(s -> s.due - target <= 0).min(DUE_ORDER).orElse(null);
        if (next == null) {
          now = target;
          return;
        }
        pending.remove(next);
        now = Math.max(now, next.due);
      }
      next.task.run();
    }
  }

  /** Runs the tasks that are due now, without moving time. */
  public void runDue() {
    advance(Duration.ZERO);
  }

  /** The delays from now of the pending tasks, soonest first. */
  public synchronized List<Duration> pendingDelays() {
    return pending.stream().sorted(DUE_ORDER).map(s -> Duration.ofNanos(s.due - now)).toList();
  }

  /** The number of pending tasks. */
  public synchronized int pending() {
    return pending.size();
  }
}
