package dev.nodelet.cache.core.internal.watch;

import dev.nodelet.objectcache.WatchEvent;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One watch on a {@link WatchHub}: the apiserver's {@code cacheWatcher}.
 *
 * <p>The dispatcher adds {@link Change}s to the input buffer; they move to the result buffer, converted by this
 * watcher's filter, as long as the result has room; the consumer takes from the result. Where the apiserver runs one
 * goroutine per watcher to move events from input to result, this watcher moves them in whichever thread made room
 * or brought an event (the dispatcher after an add, the consumer after a take), so a watch owns no thread. Both
 * buffers have the same size, so a consumer that stops taking fills the result, then the input, and only then makes
 * the dispatcher wait.
 *
 * <p><b>Fan-out cost.</b> One change is offered to every watcher, so the dispatcher's part must be cheap and must not
 * wake a consumer that has not asked for it: the result is a {@link ResultRing} that consumers take from without the
 * lock, and the dispatcher signals a consumer only while it waits, i.e. after it found the result empty. A consumer
 * that is behind thus takes what arrived meanwhile without waiting or locking.
 *
 * <p>A consumer that keeps up would still wait, and be woken, once per event: a hundred watchers at 10,000 events/s
 * make a million wake-ups a second, each preempting the dispatcher. So a consumer whose last wait brought events
 * <em>lingers</em>: it waits up to {@code linger} without asking for a signal, then takes the batch that came
 * meanwhile. It is signalled anyway once the result is half full, so lingering alone never fills a buffer (nor gets
 * a watcher closed), and when the result closes. A linger that brings nothing ends the stream: the next wait asks for
 * a signal, so the first event after a quiet spell is delivered at once. Under a stream an event waits about
 * {@code linger} at most for its consumer, which wakes about once per {@code linger} or per half buffer. Events that
 * do not depend on the watcher are made once per change and shared (see {@link Change}).
 *
 * <p>Thread-safety: {@link #lock} guards the fields marked so and every write to the {@link #result}; the consumer
 * side reads the result and {@link #backlog} (volatile) and takes from the result without it. The lock is never held
 * while waiting for anything but its own conditions. {@link #nextBookmark} belongs to the hub, under the hub's lock.
 */
final class CacheWatcher<T extends HasMetadata> extends BlockingWatch<T> {

  private static final Logger LOG = LoggerFactory.getLogger(CacheWatcher.class);

  /** What the hub does for its watchers; the watcher calls it to close itself. */
  interface Owner<T extends HasMetadata> {
    /** Removes the watcher from the hub and {@link CacheWatcher#stop stops} it (the apiserver's {@code forget}). */
    void forget(CacheWatcher<T> watcher, boolean drain);

    /** Counts a watcher closed because it did not keep up. */
    void unresponsive(CacheWatcher<T> watcher);
  }

  private final String identifier;
  private final int capacity;
  private final WatchEventConverter<T> converter;
  private final Owner<T> owner;
  private final Instant deadline;
  private final boolean allowBookmarks;
  private final long bookmarkAfterResourceVersion;
  private final long lingerNanos;

  private final ReentrantLock lock = new ReentrantLock();
  /** Signalled when the result gains an event or closes while a consumer waits. */
  private final Condition resultChanged = lock.newCondition();
  /** Signalled when the input loses an event or the watcher stops while the dispatcher waits for room. */
  private final Condition inputChanged = lock.newCondition();

  /** The result buffer; written under the lock, taken from without it. */
  private final ResultRing<T> result;
  /** True while initial events or input wait for room in the result: a consumer that takes one moves them. */
  private volatile boolean backlog;

  // guarded by lock
  private final ArrayDeque<Change<T>> input;
  /** The initial events still to send; null once they are all sent (then the input is processed). */
  private Iterator<Change<T>> initial;
  /** Input events at or below this revision were covered by the initial events and are not sent. */
  private long resourceVersion;
  private BookmarkState state;
  private boolean stopped;
  private boolean drainInputBuffer;
  private boolean done;
  /** Consumers waiting on {@link #resultChanged} to be signalled: the dispatcher signals only when there is one. */
  private int waitingConsumers;
  /** Consumers lingering on {@link #resultChanged}: signalled only when the result is half full or closes. */
  private int lingeringConsumers;
  /** Whether the consumer's last wait brought events: its next wait lingers. */
  private boolean streaming;
  /** Whether the dispatcher waits on {@link #inputChanged}. */
  private boolean dispatcherWaiting;

  /** The next time this watcher is due a bookmark; null for none. Guarded by the hub's lock. */
  Instant nextBookmark;

  /** A watcher whose consumers are signalled at every wait (no linger), as the rule tests use it. */
  CacheWatcher(String identifier, int capacity, Predicate<? super T> filter, WatchObjects<T> objects,
      Owner<T> owner, Instant deadline, boolean allowBookmarks, List<Change<T>> initialEvents,
      long startResourceVersion, long bookmarkAfterResourceVersion) {
    this(identifier, capacity, filter, objects, owner, deadline, allowBookmarks, initialEvents, startResourceVersion,
        bookmarkAfterResourceVersion, Duration.ZERO);
  }

  /**
   * @param identifier names the watcher in log lines
   * @param capacity the size of the input and of the result buffer
   * @param filter which objects the watcher sees
   * @param objects makes bookmark objects and copies of deleted ones
   * @param owner the hub
   * @param deadline when the watch ends; null for never
   * @param allowBookmarks whether the client takes bookmarks
   * @param initialEvents the events to send before any input; their greatest revision and
   *     {@code startResourceVersion} bound the input events that are sent
   * @param startResourceVersion input events at or below this revision are not sent
   * @param bookmarkAfterResourceVersion 0 for none, else the revision the client's awaited bookmark must reach
   * @param linger how long a consumer under a stream of events waits unsignalled for the next batch; zero to be
   *     signalled at every wait
   */
  CacheWatcher(String identifier, int capacity, Predicate<? super T> filter, WatchObjects<T> objects,
      Owner<T> owner, Instant deadline, boolean allowBookmarks, List<Change<T>> initialEvents,
      long startResourceVersion, long bookmarkAfterResourceVersion, Duration linger) {
    if (capacity < 1) {
      throw new IllegalArgumentException("buffer size must be positive: " + capacity);
    }
    this.identifier = identifier;
    this.capacity = capacity;
    this.converter = new WatchEventConverter<>(filter, objects);
    this.owner = owner;
    this.deadline = deadline;
    this.allowBookmarks = allowBookmarks;
    this.bookmarkAfterResourceVersion = bookmarkAfterResourceVersion;
    this.lingerNanos = linger.toNanos();
    this.state = bookmarkAfterResourceVersion == 0 ? BookmarkState.SENT : BookmarkState.WAITING;
    this.input = new ArrayDeque<>(capacity);
    this.result = new ResultRing<>(capacity);
    this.initial = initialEvents.iterator();
    this.resourceVersion = startResourceVersion;
    lock.lock();
    try {
      pump();
    } finally {
      lock.unlock();
    }
  }

  /**
   * @return the events waiting for the consumer: those in the result and those in the input waiting for room in it
   *     (initial events still to be moved are not counted)
   */
  int queued() {
    lock.lock();
    try {
      return result.size() + input.size();
    } finally {
      lock.unlock();
    }
  }

  Instant deadline() {
    return deadline;
  }

  boolean allowBookmarks() {
    return allowBookmarks;
  }

  BookmarkState state() {
    lock.lock();
    try {
      return state;
    } finally {
      lock.unlock();
    }
  }

  boolean isStopped() {
    lock.lock();
    try {
      return stopped;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Offers a change without waiting. A bookmark below the awaited revision is dropped here so that the bookmarks
   * sent every second while waiting do not fill the input.
   *
   * @return true if the change is in the input
   */
  boolean nonblockingAdd(Change<T> change) {
    if (change.isBookmark() && change.revision() < bookmarkAfterResourceVersion) {
      return false;
    }
    lock.lock();
    try {
      if (stopped || !hasInputRoom()) {
        return false;
      }
      input.add(change);
      if (change.isBookmark() && state == BookmarkState.WAITING) {
        state = BookmarkState.RECEIVED;
      }
      pump();
      return true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Offers a change and, if the input is full, closes this watcher at once. Bookmarks only ever go through
   * {@link #nonblockingAdd}, which is what moves the bookmark state.
   *
   * @return false if this watcher had to be closed
   */
  boolean add(Change<T> change) {
    if (nonblockingAdd(change) || isStopped()) {
      return true;
    }
    closeUnresponsive();
    return false;
  }

  /**
   * Offers a change and, if the input is full, waits for room until {@code deadlineNanos} (of
   * {@link System#nanoTime()}), then closes this watcher.
   *
   * @return false if this watcher had to be closed; a watcher stopped meanwhile counts as served
   */
  boolean add(Change<T> change, long deadlineNanos) {
    if (nonblockingAdd(change)) {
      return true;
    }
    lock.lock();
    try {
      long remaining = deadlineNanos - System.nanoTime();
      dispatcherWaiting = true;
      try {
        while (!stopped && !hasInputRoom() && remaining > 0) {
          remaining = inputChanged.awaitNanos(remaining);
        }
      } finally {
        dispatcherWaiting = false;
      }
      if (stopped) {
        return true;
      }
      if (hasInputRoom()) {
        input.add(change);
        pump();
        return true;
      }
    } catch (InterruptedException e) {
      // the dispatching thread is being stopped: treat as the timer firing, and keep the interrupt for its owner
      Thread.currentThread().interrupt();
    } finally {
      lock.unlock();
    }
    closeUnresponsive();
    return false;
  }

  /**
   * Holds the lock. A consumer moves waiting events after its take, but not atomically with it: moving first makes
   * "full" mean what it meant with one lock around take and move.
   */
  private boolean hasInputRoom() {
    if (input.size() < capacity) {
      return true;
    }
    pump();
    return input.size() < capacity;
  }

  private void closeUnresponsive() {
    // graceful exactly when the awaited bookmark is in the input but not yet in the result: draining gets it to the
    // client, who can then start again from it
    boolean graceful = state() == BookmarkState.RECEIVED;
    LOG.info("Closing watcher {} that does not keep up (graceful: {})", identifier, graceful);
    owner.unresponsive(this);
    owner.forget(this, graceful);
  }

  /**
   * Stops this watcher (the apiserver's {@code stopLocked}): the first stop closes the input, and ends delivery at
   * once unless draining; a later stop without draining ends delivery if it still goes on. Idempotent.
   *
   * @param drain true to deliver what the input holds first
   */
  void stop(boolean drain) {
    lock.lock();
    try {
      drainInputBuffer = drain;
      if (!stopped) {
        stopped = true;
        if (!drainInputBuffer) {
          done = true;
        }
      }
      if (!drainInputBuffer && !done) {
        done = true;
      }
      pump();
      if (dispatcherWaiting) {
        inputChanged.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /** When the next bookmark is due: see {@link BookmarkState#nextBookmarkTime}. */
  Optional<Instant> nextBookmarkTime(Instant now, Duration frequency) {
    return state().nextBookmarkTime(now, frequency, deadline);
  }

  /**
   * Moves events from the initial events and the input to the result while it has room (the apiserver's
   * {@code processInterval} and {@code process}), and closes the result once nothing more can come. Wakes a waiting
   * consumer only if the result gained something, and the dispatcher only if it waits for room. Holds the lock.
   */
  private void pump() {
    int inputBefore = input.size();
    long next = result.tail();
    long free = result.free(next);
    while (!done && free > 0) {
      Change<T> change = nextToSend();
      if (change == null) {
        break;
      }
      WatchEvent<T> event = convert(change);
      if (event != null) {
        result.put(next, event);
        next++;
        free--;
        if (change.isBookmark()) {
          state = BookmarkState.SENT;
        }
      }
    }
    boolean published = next != result.tail();
    if (published) {
      result.publish(next);
    }
    if (done && (initial != null || !input.isEmpty())) {
      // delivery ended without draining: what is left is never sent
      initial = null;
      input.clear();
    }
    boolean closing = false;
    if (!result.isClosed() && (done || stopped && initial == null && input.isEmpty())) {
      result.close();
      published = true;
      closing = true;
    }
    boolean waiting = initial != null || !input.isEmpty();
    if (waiting != backlog) {
      backlog = waiting;
    }
    // a lingering consumer is signalled too once the result is half full, so that lingering never fills a buffer
    if (published && (waitingConsumers > 0
        || lingeringConsumers > 0 && (closing || result.halfFull(next)))) {
      resultChanged.signalAll();
    }
    if (dispatcherWaiting && input.size() < inputBefore) {
      inputChanged.signal();
    }
  }

  private Change<T> nextToSend() {
    if (initial != null) {
      if (initial.hasNext()) {
        Change<T> change = initial.next();
        // events of the initial state need not come in revision order; input at or below any of them is covered
        resourceVersion = Math.max(resourceVersion, change.revision());
        return change;
      }
      initial = null;
    }
    Change<T> change;
    while ((change = input.poll()) != null) {
      if (change.revision() > resourceVersion || change.isBookmark() && change.revision() == resourceVersion
          && state != BookmarkState.SENT) {
        return change;
      }
    }
    return null;
  }

  /**
   * The event this watcher's client sees for a change; a bookmark is this watcher's own, as its annotation depends on
   * whether the awaited bookmark was sent.
   *
   * @return the event; null if the object is not in the watched set before or after
   */
  WatchEvent<T> convert(Change<T> change) {
    return converter.convert(change, state != BookmarkState.SENT);
  }

  /**
   * Takes the next event without waiting and without the lock, unless taking it lets waiting events move into the
   * result.
   *
   * @return the event; null if the result is empty
   */
  private WatchEvent<T> tryTake() {
    WatchEvent<T> event = result.tryTake();
    if (event != null && backlog) {
      lock.lock();
      try {
        pump();
      } finally {
        lock.unlock();
      }
    }
    return event;
  }

  /** Takes the next event, waiting (or lingering) for one if the result is empty. */
  @Override
  WatchEvent<T> take(long nanos, boolean forever) throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    long deadlineNanos = forever ? 0 : System.nanoTime() + nanos;
    while (true) {
      WatchEvent<T> event = tryTake();
      if (event != null) {
        return event;
      }
      lock.lockInterruptibly();
      try {
        pump();
        if (result.hasEvents()) {
          continue;
        }
        if (result.isClosed()) {
          return null;
        }
        long remaining = forever ? Long.MAX_VALUE : deadlineNanos - System.nanoTime();
        if (remaining <= 0) {
          return null;
        }
        if (streaming && lingerNanos > 0) {
          lingeringConsumers++;
          try {
            resultChanged.awaitNanos(Math.min(lingerNanos, remaining));
          } finally {
            lingeringConsumers--;
          }
        } else {
          // the dispatcher sees this under the lock after it has published, so no signal is missed
          waitingConsumers++;
          try {
            if (forever) {
              resultChanged.await();
            } else {
              resultChanged.awaitNanos(remaining);
            }
          } finally {
            waitingConsumers--;
          }
        }
        streaming = result.hasEvents();
      } finally {
        lock.unlock();
      }
    }
  }

  @Override
  public boolean isEnded() {
    return result.isEnded();
  }

  @Override
  public void close() {
    owner.forget(this, false);
    lock.lock();
    try {
      result.discard();
      if (waitingConsumers + lingeringConsumers > 0) {
        resultChanged.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  @Override
  public String toString() {
    return identifier;
  }
}
