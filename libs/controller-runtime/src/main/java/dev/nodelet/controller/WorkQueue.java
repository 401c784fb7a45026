package dev.nodelet.controller;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;

/**
 * client-go's rate-limiting work queue: an item is queued at most once (the dirty set), and an item added while it
 * is being processed (the processing set) is queued again only when {@link #done} is called, so one item is never
 * processed by two threads at once and no change is lost. Delayed adds run on the {@link Scheduler}; the queue has no
 * thread of its own, and {@link #shutDown()} cancels the delayed adds and wakes every {@link #take()}.
 *
 * <p>A worker: {@code for (T item = queue.take(); item != null; item = queue.take())}, then for each item either
 * {@link #forget} (success) or {@link #addRateLimited} (failure), and always {@link #done}.
 *
 * @param <T> the item type: equal items are one item
 */
public final class WorkQueue<T> {

  private final RateLimiter<T> rateLimiter;
  private final Scheduler scheduler;
  private final Deque<T> queue = new ArrayDeque<>(); // guarded by this
  private final Set<T> dirty = new HashSet<>(); // guarded by this
  private final Set<T> processing = new HashSet<>(); // guarded by this
  private final Set<Scheduler.Task> delayed = new HashSet<>(); // guarded by this
  private boolean shutDown; // guarded by this

  public WorkQueue(RateLimiter<T> rateLimiter, Scheduler scheduler) {
    this.rateLimiter = Objects.requireNonNull(rateLimiter, "rateLimiter");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
  }

  /** Queues the item unless it is queued already; an item being processed is queued again at its {@link #done}. */
  public synchronized void add(T item) {
    Objects.requireNonNull(item, "item");
    if (shutDown || !dirty.add(item) || processing.contains(item)) {
      return;
    }
    queue.addLast(item);
    notifyAll();
  }

  /** Adds the item once {@code delay} has passed (at once for zero or less). */
  public void addAfter(T item, Duration delay) {
    if (delay.isZero() || delay.isNegative()) {
      add(item);
      return;
    }
    synchronized (this) {
      if (shutDown) {
        return;
      }
      Scheduler.Task[] self = new Scheduler.Task[1];
      Runnable later = () -> {
        synchronized (this) {
          delayed.remove(self[0]);
        }
        add(item);
      };
      // scheduled under the lock, so the task cannot run before it is known (a drivable scheduler runs it later)
      self[0] = scheduler.schedule(later, delay);
      delayed.add(self[0]);
    }
  }

  /** Adds the item after the delay the rate limiter gives it. */
  public void addRateLimited(T item) {
    addAfter(item, rateLimiter.when(item));
  }

  /** The item was processed successfully: the rate limiter forgets its failures. */
  public void forget(T item) {
    rateLimiter.forget(item);
  }

  /** How often the item was requeued with rate limiting since it was last forgotten. */
  public int numRequeues(T item) {
    return rateLimiter.numRequeues(item);
  }

  /**
   * Waits for the next item and marks it as being processed; the caller must call {@link #done}.
   *
   * @return the item, or {@code null} once the queue is shut down
   */
  public synchronized T take() throws InterruptedException {
    while (queue.isEmpty() && !shutDown) {
      wait();
    }
    return shutDown ? null : next();
  }

  /** Like {@link #take()} without waiting: {@code null} when nothing is queued or the queue is shut down. */
  public synchronized T poll() {
    return shutDown || queue.isEmpty() ? null : next();
  }

  private T next() {
    T item = queue.removeFirst();
    processing.add(item);
    dirty.remove(item);
    return item;
  }

  /** Ends the processing of an item; if it was added meanwhile, it is queued again. */
  public synchronized void done(T item) {
    processing.remove(item);
    if (dirty.contains(item) && !shutDown) {
      queue.addLast(item);
      notifyAll();
    }
  }

  /** Wakes the waiting threads and cancels the delayed adds; later adds are ignored. Idempotent. */
  public void shutDown() {
    Set<Scheduler.Task> cancelled;
    synchronized (this) {
      shutDown = true;
      cancelled = Set.copyOf(delayed);
      delayed.clear();
      notifyAll();
    }
    cancelled.forEach(Scheduler.Task::cancel);
  }

  public synchronized boolean isShutDown() {
    return shutDown;
  }

  /** The items waiting to be processed. */
  public synchronized int length() {
    return queue.size();
  }

  /** The delayed adds not yet due. */
  public synchronized int delayedCount() {
    return delayed.size();
  }
}
