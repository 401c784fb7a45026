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
 * of one reflector never overlap. What a watch's stream delivers runs on the thread that read it when the reflector
 * is idle ({@link #executeHere}). After {@link #close()} queued tasks are dropped.
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

  /**
   * Runs the task on the calling thread if nothing of this reflector is queued or running, else queues it behind what
   * is: the order and the one-at-a-time rule hold either way. A watch event then costs no hand-over to the pool, whose
   * thread would have to be woken for each (on a busy node that wake-up was most of the time from a frame's arrival to
   * the object being visible); fabric8's informers also handle events on the thread that read them. At most
   * {@value #BATCH} tasks run here before the rest go to the pool.
   */
  void executeHere(Runnable task) {
    if (closed) {
      return;
    }
    tasks.add(task);
    if (scheduled.compareAndSet(false, true)) {
      drain();
    }
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
