package dev.nodelet.dra.claims;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A scheduler and clock that a test drives: tasks run on the test's thread in {@link #runDue()} and
 * {@link #advance(Duration)}, in time order, so a test neither sleeps nor waits.
 */
final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {

  private Instant now = Instant.parse("2026-01-01T00:00:00Z");
  private long sequence;
  private final PriorityQueue<Task> queue = new PriorityQueue<>();
  private boolean shutdown;

  /** The clock the scheduler's time is read from. */
  final Clock clock = new Clock() {
    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      synchronized (ManualScheduler.this) {
        return now;
      }
    }
  };

  private final class Task extends FutureTask<Object> implements ScheduledFuture<Object> {
    private Instant at;
    private final Duration period; // null: once
    private final long seq = sequence++;

    Task(Callable<Object> work, Instant at, Duration period) {
      super(work);
      this.at = at;
      this.period = period;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(Duration.between(clock.instant(), at));
    }

    @Override
    public int compareTo(Delayed o) {
      Task t = (Task) o;
      int c = at.compareTo(t.at);
      return c != 0 ? c : Long.compare(seq, t.seq);
    }

    void runOnce() {
      if (period == null) {
        run();
      } else if (runAndReset()) {
        synchronized (ManualScheduler.this) {
          at = now.plus(period);
          queue.add(this);
        }
      }
    }
  }

  /** Runs every task that is due now, including those they schedule for now. */
  void runDue() {
    while (true) {
      Task next;
      synchronized (this) {
        next = queue.peek();
        if (next == null || next.at.isAfter(now)) {
          return;
        }
        queue.poll();
      }
      if (!next.isCancelled()) {
        next.runOnce();
      }
    }
  }

  /** Moves time forward, running the tasks due on the way at their time. */
  void advance(Duration by) {
    Instant target;
    synchronized (this) {
      target = now.plus(by);
    }
    while (true) {
      runDue();
      synchronized (this) {
        Task next = queue.peek();
        if (next == null || next.at.isAfter(target)) {
          now = target;
          break;
        }
        now = next.at;
      }
    }
    runDue();
  }

  private synchronized Task add(Callable<Object> work, long delay, TimeUnit unit, Duration period) {
    if (shutdown) {
      throw new java.util.concurrent.RejectedExecutionException("shut down");
    }
    Task t = new Task(work, now.plus(Duration.ofNanos(unit.toNanos(Math.max(0, delay)))), period);
    queue.add(t);
    return t;
  }

  @Override
  public void execute(Runnable command) {
    add(Executors.callable(command), 0, TimeUnit.NANOSECONDS, null);
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    return add(Executors.callable(command), delay, unit, null);
  }

  @Override
  @SuppressWarnings("unchecked")
  public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
    return (ScheduledFuture<V>) add((Callable<Object>) callable, delay, unit, null);
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
    return add(Executors.callable(command), initialDelay, unit, Duration.ofNanos(unit.toNanos(period)));
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
    return scheduleAtFixedRate(command, initialDelay, delay, unit);
  }

  @Override
  public synchronized void shutdown() {
    shutdown = true;
  }

  @Override
  public synchronized List<Runnable> shutdownNow() {
    shutdown = true;
    queue.clear();
    return List.of();
  }

  @Override
  public synchronized boolean isShutdown() {
    return shutdown;
  }

  @Override
  public synchronized boolean isTerminated() {
    return shutdown;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) {
    return true;
  }
}
