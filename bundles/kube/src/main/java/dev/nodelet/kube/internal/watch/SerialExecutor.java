package dev.nodelet.kube.internal.watch;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the tasks of one reflector one at a time, in order, on a shared pool: no thread per watch, and the callbacks
 * of one reflector never overlap. After {@link #close()} queued tasks are dropped.
 */
final class SerialExecutor implements Executor {

  private static final Logger LOG = LoggerFactory.getLogger(SerialExecutor.class);

  private static final int BATCH = 64;

  private final Executor pool;
  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean scheduled = new AtomicBoolean();
  private volatile boolean closed;

  SerialExecutor(Executor pool) {
    this.pool = pool;
  }

  @Override
  public void execute(Runnable task) {
    if (closed) {
      return;
    }
    tasks.add(task);
    schedule();
  }

  void close() {
    closed = true;
    tasks.clear();
  }

  private void schedule() {
    if (scheduled.compareAndSet(false, true)) {
      try {
        pool.execute(this::drain);
      } catch (RejectedExecutionException e) {
        // the engine is closing: its reflectors are closed with it
        scheduled.set(false);
        tasks.clear();
      }
    }
  }

  private void drain() {
    Runnable task;
    int budget = BATCH; // then yield the thread, so one busy reflector cannot starve the others
    while (!closed && budget-- > 0 && (task = tasks.poll()) != null) {
      try {
        task.run();
      } catch (RuntimeException e) {
        LOG.error("A reflector task failed", e);
      }
    }
    scheduled.set(false);
    if (!closed && !tasks.isEmpty()) {
      schedule();
    }
  }
}
