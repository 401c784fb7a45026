package dev.nodelet.dra.internal;

import dev.nodelet.dra.runtime.Scheduler;
import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The production {@link Scheduler}: one daemon thread, released by {@link #close()}. */
final class ExecutorScheduler implements Scheduler, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ExecutorScheduler.class);

  private final ScheduledThreadPoolExecutor executor;

  ExecutorScheduler(String threadName) {
    executor = new ScheduledThreadPoolExecutor(1, r -> {
      Thread thread = new Thread(r, threadName);
      thread.setDaemon(true);
      return thread;
    });
    // cancelled grace timers must not pile up in the queue
    executor.setRemoveOnCancelPolicy(true);
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
        LOG.error("A scheduled task of the DRA controller failed", e);
      }
    };
    var future = executor.schedule(logged, Math.max(0, delay.toNanos()), TimeUnit.NANOSECONDS);
    return () -> future.cancel(false);
  }

  @Override
  public void close() {
    executor.shutdownNow();
    try {
      if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
        LOG.warn("The DRA controller's timer thread did not stop within 10 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
