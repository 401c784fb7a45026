package dev.nodelet.dra.internal;

import dev.nodelet.dra.runtime.Scheduler;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Set;

/**
 * client-go's rate-limiting work queue: an item is queued at most once, and an item added while it is being
 * processed is queued again only when {@link #done} is called, so one item is never processed by two threads and
 * no event is lost.
 */
final class WorkQueue<T> {

  private final RateLimiter<T> rateLimiter;
  private final Scheduler scheduler;
  private final Deque<T> queue = new ArrayDeque<>();
  private final Set<T> dirty = new HashSet<>();
  private final Set<T> processing = new HashSet<>();
  private boolean shutDown;

  WorkQueue(RateLimiter<T> rateLimiter, Scheduler scheduler) {
    this.rateLimiter = rateLimiter;
    this.scheduler = scheduler;
  }

  synchronized void add(T item) {
    if (shutDown || !dirty.add(item) || processing.contains(item)) {
      return;
    }
    queue.addLast(item);
    notifyAll();
  }

  /** Adds the item once {@code delay} has passed. */
  void addAfter(T item, Duration delay) {
    if (delay.isZero() || delay.isNegative()) {
      add(item);
    } else {
      scheduler.schedule(() -> add(item), delay);
    }
  }

  /** Adds the item after the delay the rate limiter gives it. */
  void addRateLimited(T item) {
    addAfter(item, rateLimiter.when(item));
  }

  /** The item was processed successfully: its failures are forgotten. */
  void forget(T item) {
    rateLimiter.forget(item);
  }

  /**
   * Waits for the next item and marks it as being processed; the caller must call {@link #done}.
   *
   * @return the item, or {@code null} once the queue is shut down
   */
  synchronized T take() throws InterruptedException {
    while (queue.isEmpty() && !shutDown) {
      wait();
    }
    if (shutDown) {
      return null;
    }
    T item = queue.removeFirst();
    processing.add(item);
    dirty.remove(item);
    return item;
  }

  /** Ends the processing of an item; if it was added meanwhile, it is queued again. */
  synchronized void done(T item) {
    processing.remove(item);
    if (dirty.contains(item)) {
      queue.addLast(item);
      notifyAll();
    }
  }

  /** Wakes the waiting threads; later adds are ignored. */
  synchronized void shutDown() {
    shutDown = true;
    notifyAll();
  }

  synchronized int length() {
    return queue.size();
  }
}
