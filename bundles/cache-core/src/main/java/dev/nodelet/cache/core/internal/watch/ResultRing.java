package dev.nodelet.cache.core.internal.watch;

import dev.nodelet.objectcache.WatchEvent;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The result buffer of a {@link CacheWatcher}: event number {@code n} is in slot {@code n % capacity}; the events from
 * {@link #head} to {@link #tail} are there to take.
 *
 * <p>One change is offered to every watcher, so the dispatcher's part must be cheap: consumers take from the ring
 * without the watcher's lock (a compare-and-set of {@link #head}). Slots are written by the watcher under its lock,
 * only while {@code tail - head < capacity}, so never one that a consumer may still be reading; a taken slot keeps its
 * event until it is overwritten or the ring is {@link #discard discarded}.
 */
final class ResultRing<T extends HasMetadata> {

  private final int capacity;
  private final WatchEvent<T>[] slots;
  /** The number of the next event to take; consumers advance it with a compare-and-set. */
  private final AtomicLong head = new AtomicLong();
  /** The number of the next event to put; written under the watcher's lock after the slot. */
  private volatile long tail;
  /** True once nothing more will be put; written under the watcher's lock after the last {@link #tail}. */
  private volatile boolean closed;

  ResultRing(int capacity) {
    this.capacity = capacity;
    @SuppressWarnings("unchecked")
    WatchEvent<T>[] array = (WatchEvent<T>[]) new WatchEvent<?>[capacity];
    this.slots = array;
  }

  /** The number of the next event to put. */
  long tail() {
    return tail;
  }

  /** The events there to take. Tail is read first: head never passes it. */
  int size() {
    long t = tail;
    return (int) (t - head.get());
  }

  /** Room for events after {@code next} (a tail not yet published). Under the watcher's lock. */
  long free(long next) {
    return capacity - (next - head.get());
  }

  /** Whether events up to {@code next} (a tail) fill half the ring or more. Under the watcher's lock. */
  boolean halfFull(long next) {
    return 2 * (next - head.get()) >= capacity;
  }

  /** Writes event number {@code n}; it is there to take once {@link #publish} passes it. Under the watcher's lock. */
  void put(long n, WatchEvent<T> event) {
    slots[(int) (n % capacity)] = event;
  }

  /** Makes the events before {@code next} there to take. Under the watcher's lock, after their {@link #put}. */
  void publish(long next) {
    tail = next;
  }

  /** Nothing more will be put. Under the watcher's lock, after the last {@link #publish}. */
  void close() {
    closed = true;
  }

  boolean isClosed() {
    return closed;
  }

  /** Whether an event is there to take. */
  boolean hasEvents() {
    return head.get() < tail;
  }

  /** Closed and every event taken: closed is read first, as the last tail was written before it. */
  boolean isEnded() {
    return closed && head.get() >= tail;
  }

  /**
   * Takes the next event without waiting and without a lock.
   *
   * @return the event; null if none is there
   */
  WatchEvent<T> tryTake() {
    while (true) {
      long taken = head.get();
      if (taken >= tail) {
        return null;
      }
      // read before the compare-and-set: only after it may the slot be overwritten
      WatchEvent<T> event = slots[(int) (taken % capacity)];
      if (head.compareAndSet(taken, taken + 1)) {
        return event;
      }
    }
  }

  /**
   * Drops what was not taken: a consumer's compare-and-set from an older head fails from now on; reading head in
   * getAndSet orders every take before the slots are cleared. Under the watcher's lock.
   */
  void discard() {
    head.getAndSet(tail);
    Arrays.fill(slots, null);
  }
}
