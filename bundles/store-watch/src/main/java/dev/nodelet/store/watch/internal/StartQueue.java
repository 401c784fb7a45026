package dev.nodelet.store.watch.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Starts lists at most {@code limit} at a time, on one executor thread. Registering a pod only enqueues, so it never
 * waits for the network, and a thousand first references do not open a thousand requests at once (the JDK client
 * would grow its thread pool and run into the server's HTTP/2 stream limit).
 */
final class StartQueue {

  private final Executor executor;
  private final int limit;
  private final ConcurrentLinkedQueue<Supplier<CompletableFuture<?>>> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicBoolean pumpScheduled = new AtomicBoolean();

  /**
   * @param executor runs the starts; a single thread
   * @param limit the most starts whose futures have not completed yet
   */
  StartQueue(Executor executor, int limit) {
    this.executor = executor;
    this.limit = limit;
  }

  /** Enqueues a start: the supplier sends a request and returns a future that completes when it is answered. */
  void submit(Supplier<CompletableFuture<?>> start) {
    queue.add(start);
    schedulePump();
  }

  private void schedulePump() {
    if (pumpScheduled.compareAndSet(false, true)) {
      try {
        executor.execute(this::pump);
      } catch (RejectedExecutionException e) {
        // the strategy is closed: nothing starts any more
        queue.clear();
      }
    }
  }

  private void pump() {
    pumpScheduled.set(false);
    while (inFlight.get() < limit) {
      Supplier<CompletableFuture<?>> start = queue.poll();
      if (start == null) {
        return;
      }
      inFlight.incrementAndGet();
      CompletableFuture<?> done;
      try {
        done = start.get();
      } catch (RuntimeException e) {
        done = CompletableFuture.completedFuture(null);
      }
      done.whenComplete((result, error) -> {
        inFlight.decrementAndGet();
        schedulePump();
      });
    }
  }
}
