package dev.nodelet.node.internal;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The production {@link Timer}: two daemon threads, so that a status write waiting on a slow API server does not
 * hold up the Lease renewal (the kubelet runs them apart too). Released by {@link #close()}.
 */
final class ExecutorTimer implements Timer, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ExecutorTimer.class);

  private final ScheduledThreadPoolExecutor executor;

  ExecutorTimer() {
    AtomicInteger count = new AtomicInteger();
    executor = new ScheduledThreadPoolExecutor(2, r -> {
      Thread thread = new Thread(r, "nodelet-node-" + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    });
    executor.setRemoveOnCancelPolicy(true);
  }

  @Override
  public Cancellable schedule(Runnable task, Duration delay) {
    ScheduledFuture<?> future = executor.schedule(() -> {
      try {
        task.run();
      } catch (RuntimeException e) {
        LOG.error("A task of the node failed", e);
      }
    }, Math.max(0, delay.toNanos()), TimeUnit.NANOSECONDS);
    return () -> future.cancel(false);
  }

  @Override
  public void close() {
    executor.shutdownNow();
    try {
      if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
        LOG.warn("The node's timer threads did not stop within 10 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
