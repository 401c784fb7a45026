package dev.nodelet.controller;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The production {@link Scheduler}: system time and a {@link ScheduledExecutorService}, either one daemon thread of
 * its own ({@link #ExecutorScheduler(String)}, ended by {@link #close()}) or an executor the caller owns
 * ({@link #on}). A task that throws is logged and does not stop later tasks.
 */
public final class ExecutorScheduler implements Scheduler, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ExecutorScheduler.class);

  private final ScheduledExecutorService executor;
  private final String name;
  private final boolean owned;
  private final List<Thread> threads = new CopyOnWriteArrayList<>();

  /** A scheduler with one daemon thread named {@code threadName}; {@link #close()} ends it. */
  public ExecutorScheduler(String threadName) {
    ScheduledThreadPoolExecutor own = new ScheduledThreadPoolExecutor(1, r -> {
      Thread thread = new Thread(r, threadName);
      thread.setDaemon(true);
      threads.add(thread);
      return thread;
    });
    // cancelled timers (grace periods, retries) must not pile up in the queue
    own.setRemoveOnCancelPolicy(true);
    this.executor = own;
    this.name = threadName;
    this.owned = true;
  }

  private ExecutorScheduler(ScheduledExecutorService executor, String name) {
    this.executor = executor;
    this.name = name;
    this.owned = false;
  }

  /** A scheduler on an executor the caller owns and shuts down; {@link #close()} leaves it running. */
  public static ExecutorScheduler on(ScheduledExecutorService executor, String name) {
    return new ExecutorScheduler(executor, name);
  }

  @Override
  public long nanoTime() {
    return System.nanoTime();
  }

  @Override
  public Task schedule(Runnable task, Duration delay) {
    Runnable logged = () -> {
      try {
        task.run();
      } catch (RuntimeException e) {
        LOG.error("A scheduled task of {} failed", name, e);
      }
    };
    var future = executor.schedule(logged, Math.max(0, delay.toNanos()), TimeUnit.NANOSECONDS);
    return () -> future.cancel(false);
  }

  /**
   * Ends the own thread, waiting up to 10 s for a running task; pending tasks are dropped. Returns once the thread
   * has ended (the pool reports termination a moment before its last thread ends). Idempotent.
   */
  @Override
  public void close() {
    if (!owned) {
      return;
    }
    executor.shutdownNow();
    try {
      if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
        LOG.warn("The thread of {} did not stop within 10 s", name);
        return;
      }
      for (Thread thread : threads) {
        if (thread != Thread.currentThread()) {
          thread.join(1_000);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
