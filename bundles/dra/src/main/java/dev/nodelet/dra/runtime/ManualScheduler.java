package dev.nodelet.dra.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A {@link Scheduler} whose time moves only in {@link #advance}; due tasks run on the calling thread. For tests that
 * drive the controller's retries, rate limits and grace periods without waiting.
 */
public final class ManualScheduler implements Scheduler {

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
      synchronized (ManualScheduler.this) {
        pending.remove(this);
      }
    }
  }

  private final List<Scheduled> pending = new ArrayList<>();
  private long now = 1_000_000_000L;
  private long sequence;

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

  /** Moves time forward, running every task that falls due, in order of due time. */
  public void advance(Duration step) {
    long target;
    synchronized (this) {
      target = now + step.toNanos();
    }
    while (true) {
      Scheduled next;
      synchronized (this) {
        next = pending.stream().filter(s -> s.due <= target)
            .min(Comparator.<Scheduled>comparingLong(s -> s.due).thenComparingLong(s -> s.order)).orElse(null);
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

  /** The delays from now of the pending tasks, soonest first. */
  public synchronized List<Duration> pendingDelays() {
    return pending.stream().map(s -> Duration.ofNanos(s.due - now)).sorted().toList();
  }
}
