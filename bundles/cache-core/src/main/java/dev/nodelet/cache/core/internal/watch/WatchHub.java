package dev.nodelet.cache.core.internal.watch;

import dev.nodelet.cache.core.FanOut;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchEvent;
import dev.nodelet.objectcache.WatchExpiredException;
import dev.nodelet.objectcache.WatchOptions;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IntSummaryStatistics;
import java.util.List;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watch fan-out over one cache of objects, with the apiserver's cacher and cacheWatcher rules: a store feeds it the
 * objects it observes ({@link #put}, {@link #remove}, {@link #progress}) and consumers open {@link Watch}es on it.
 *
 * <p><b>Revisions.</b> Every change gets a cache revision: the object's own resource version when that is greater
 * than the last revision, else the last revision plus one. Stores see objects out of resource-version order (one
 * API server watch per object, or fetches of unrelated objects at different times), so the cache keeps its own
 * strictly increasing order in which "only newer events" holds; as long as changes arrive in order the revisions are
 * the API server's resource versions. The cache starts empty at revision 1, so an awaited bookmark always has a
 * revision above 0 (which would mean "nothing awaited").
 *
 * <p><b>Dispatch.</b> A change is dispatched in the thread that feeds it, under the hub's lock: first offered to every
 * watcher without waiting, then to the watchers that were full, which share one {@link TimeBudget}; once that is
 * spent, a full watcher is closed at once. A feeding thread thus waits at most the budget per change.
 *
 * <p><b>Threads.</b> With a positive {@link WatchHubSettings#tickPeriod()} the hub owns exactly one timer thread,
 * {@code nodelet-watch-timer-<resource>}, that sends due bookmarks and ends watches past their deadline. Watches own
 * none. {@link #close()} stops the timer thread and waits for it, and ends every watch.
 *
 * <p>Lock order: the hub's lock, then a watcher's. A watcher removes itself from {@link #watchers} (a copy-on-write
 * list) without the hub's lock, so a consumer closing its watch never waits for a dispatch.
 *
 * @param <T> the Kubernetes type of the objects
 */
public final class WatchHub<T extends HasMetadata> implements FanOut<T> {

  private static final Logger LOG = LoggerFactory.getLogger(WatchHub.class);

  private record Entry<T>(T object, long revision) {
  }

  private final String resource;
  private final WatchObjects<T> objects;
  private final Clock clock;
  private final WatchHubSettings settings;
  private final TimeBudget budget;
  private final ScheduledExecutorService timer;
  /** The timer's thread, joined on close: the executor counts as terminated slightly before its thread has ended. */
  private volatile Thread timerThread;
  private final CopyOnWriteArrayList<CacheWatcher<T>> watchers = new CopyOnWriteArrayList<>();
  private final LongAdder terminatedWatchers = new LongAdder();
  private final LongAdder initialEvents = new LongAdder();
  private final LongAdder dispatchWaits = new LongAdder();
  private final AtomicLong watcherIds = new AtomicLong();
  private final CacheWatcher.Owner<T> owner = new CacheWatcher.Owner<>() {
    @Override
    public void forget(CacheWatcher<T> watcher, boolean drain) {
      WatchHub.this.forget(watcher, drain);
    }

    @Override
    public void unresponsive(CacheWatcher<T> watcher) {
      terminatedWatchers.increment();
    }
  };

  private final ReentrantLock lock = new ReentrantLock();
  // guarded by lock
  private final TreeMap<String, Entry<T>> store = new TreeMap<>();
  private final ArrayDeque<Change<T>> history = new ArrayDeque<>();
  private long revision = 1;
  /** The history holds every change after this revision. */
  private long historyStart = 1;
  private boolean closed;

  /**
   * @param resource the plural resource name, e.g. {@code configmaps}, for messages and the timer thread's name
   * @param objects makes bookmark objects and copies of deleted objects
   * @param clock the time of bookmarks, deadlines and the refill of the dispatch budget
   * @param settings the tunables; with a positive tick period the hub starts its timer thread now
   */
  public WatchHub(String resource, WatchObjects<T> objects, Clock clock, WatchHubSettings settings) {
    this.resource = Objects.requireNonNull(resource, "resource");
    this.objects = Objects.requireNonNull(objects, "objects");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.budget = new TimeBudget(clock, settings.maxDispatchBudget(), settings.budgetRefillPerSecond());
    if (settings.tickPeriod().isZero()) {
      this.timer = null;
    } else {
      this.timer = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "nodelet-watch-timer-" + resource);
        thread.setDaemon(true);
        timerThread = thread;
        return thread;
      });
      long period = settings.tickPeriod().toNanos();
      timer.scheduleWithFixedDelay(this::tickSafely, period, period, TimeUnit.NANOSECONDS);
    }
  }

  /**
   * Records an object as a fetch or a watch of the store observed it. An object not in the cache yet is dispatched
   * as ADDED, a changed one as MODIFIED; one with the resource version already cached is no change (a fetch that
   * found nothing new), and one with an older resource version is a stale observation (a fetch that raced a watch,
   * or two fetches finishing out of order) and ignored. May wait up to the dispatch budget for full watchers.
   * Ignored once the hub is closed.
   *
   * @param object the object as it is now; the hub keeps it, so the caller must not modify it afterwards
   */
  public void put(T object) {
    ObjectMeta metadata = Objects.requireNonNull(object.getMetadata(), "metadata");
    String key = key(metadata.getNamespace(), metadata.getName());
    lock.lock();
    try {
      if (closed) {
        return;
      }
      Entry<T> old = store.get(key);
      String version = metadata.getResourceVersion();
      if (old != null && isNotNewer(version, old.object().getMetadata().getResourceVersion())) {
        return;
      }
      long next = nextRevision(version);
      store.put(key, new Entry<>(object, next));
      dispatch(new Change<>(old == null ? WatchEvent.Type.ADDED : WatchEvent.Type.MODIFIED,
          old == null ? null : old.object(), object, next));
    } finally {
      lock.unlock();
    }
  }

  /**
   * Records that an object is gone: deleted on the API server, not found by a fetch, or no longer referenced by any
   * pod. Dispatched as DELETED if the object was cached. Ignored once the hub is closed.
   *
   * @param namespace the object's namespace
   * @param name the object's name
   * @param resourceVersion the resource version of the deletion; {@code null} if unknown
   */
  public void remove(String namespace, String name, String resourceVersion) {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      Entry<T> old = store.remove(key(namespace, name));
      if (old != null) {
        long next = nextRevision(resourceVersion);
        dispatch(new Change<>(WatchEvent.Type.DELETED, old.object(), null, next));
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Records that the source has seen everything up to a resource version (an API server bookmark), so the next
   * bookmarks can carry it.
   *
   * @param resourceVersion the resource version
   */
  public void progress(String resourceVersion) {
    lock.lock();
    try {
      revision = Math.max(revision, parse(resourceVersion));
    } finally {
      lock.unlock();
    }
  }

  /**
   * Opens a watch.
   *
   * @param options what to watch; see {@link WatchOptions}
   * @return the watch, already holding its first events
   * @throws IllegalArgumentException if the resource version is not a decimal number
   * @throws WatchExpiredException if the resource version is older than the history reaches
   * @throws IllegalStateException if the hub is closed
   */
  public Watch<T> watch(WatchOptions<? super T> options) {
    long requested = options.resourceVersion().map(WatchHub::parseRequested).orElse(0L);
    int size = options.bufferSize() == 0 ? settings.defaultBufferSize() : options.bufferSize();
    lock.lock();
    try {
      if (closed) {
        throw new IllegalStateException("the watch cache of " + resource + " is closed");
      }
      List<Change<T>> initial;
      long start;
      long bookmarkAfter = 0;
      if (options.sendInitialEvents()) {
        // the current state, which is "not older than" any version the cache has reached
        initial = new ArrayList<>(store.size());
        store.values().forEach(e -> initial.add(new Change<>(WatchEvent.Type.ADDED, null, e.object(), e.revision())));
        start = revision;
        if (options.allowBookmarks()) {
          bookmarkAfter = Math.max(requested, revision);
        }
      } else if (requested == 0 || requested >= revision) {
        initial = List.of();
        start = Math.max(requested, revision);
      } else if (requested >= historyStart) {
        initial = history.stream().filter(c -> c.revision() > requested).toList();
        start = requested;
      } else {
        throw new WatchExpiredException(resource, Long.toString(requested), Long.toString(historyStart));
      }
      initialEvents.add(initial.size());
      CacheWatcher<T> watcher = new CacheWatcher<>(resource + "#" + watcherIds.incrementAndGet(), size,
          options::matches, objects, owner, options.deadline().orElse(null), options.allowBookmarks(), initial,
          start, bookmarkAfter, settings.consumerLinger());
      watchers.add(watcher);
      if (watcher.allowBookmarks()) {
        watcher.nextBookmark = watcher.nextBookmarkTime(clock.instant(), settings.bookmarkFrequency()).orElse(null);
      }
      LOG.debug("Watch {} opened at revision {} with {} initial events", watcher, start, initial.size());
      return watcher;
    } finally {
      lock.unlock();
    }
  }

  /**
   * The timer's work (the apiserver's bookmark timer): ends the watches whose deadline has come, then sends a
   * bookmark at the current revision to every watcher that is due one, without waiting, and schedules its next.
   * The hub's timer thread calls it every {@link WatchHubSettings#tickPeriod()}; without one, the owner does.
   */
  public void tick() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      Instant now = clock.instant();
      for (CacheWatcher<T> watcher : watchers) {
        if (watcher.deadline() != null && !now.isBefore(watcher.deadline())) {
          forget(watcher, false);
        }
      }
      Change<T> bookmark = Change.bookmark(revision);
      for (CacheWatcher<T> watcher : watchers) {
        if (watcher.nextBookmark != null && !watcher.nextBookmark.isAfter(now)) {
          watcher.nonblockingAdd(bookmark);
          watcher.nextBookmark = watcher.nextBookmarkTime(now, settings.bookmarkFrequency()).orElse(null);
        }
      }
    } finally {
      lock.unlock();
    }
  }

  private void tickSafely() {
    try {
      tick();
    } catch (RuntimeException e) {
      // a failing tick must not cancel the timer: the next one tries again
      LOG.warn("Watch timer of {} failed", resource, e);
    }
  }

  /** @return how many watchers were closed because they did not keep up */
  public long terminatedWatchers() {
    return terminatedWatchers.sum();
  }

  /**
   * @return how many times the dispatcher waited for a full watcher; each wait ends by a deadline within the dispatch
   *     budget, so this count bounds the time feeding spent waiting without measuring it
   */
  public long dispatchWaits() {
    return dispatchWaits.sum();
  }

  /** @return how many initial events (current state or replayed history) watches were given */
  public long initialEvents() {
    return initialEvents.sum();
  }

  /**
   * @return the events the open watches hold for their consumers: the sum over all watches (a count of 0 with no
   *     watch) and the most one watch holds
   */
  public IntSummaryStatistics queuedEvents() {
    IntSummaryStatistics queued = new IntSummaryStatistics();
    // without the hub's lock, so a scrape never waits for a dispatch; each watcher's own lock is short
    watchers.forEach(watcher -> queued.accept(watcher.queued()));
    return queued;
  }

  /** @return how many watches are open */
  public int watcherCount() {
    return watchers.size();
  }

  /** @return the resource the hub serves */
  public String resource() {
    return resource;
  }

  /**
   * Ends every watch (events already in their results can still be taken), stops the timer thread and waits for it.
   * Idempotent.
   */
  @Override
  public void close() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      watchers.forEach(watcher -> forget(watcher, false));
    } finally {
      lock.unlock();
    }
    // outside the lock: a tick in progress may be waiting for it
    if (timer != null) {
      timer.shutdownNow();
      try {
        Thread thread = timerThread;
        if (thread != null) {
          thread.join(TimeUnit.SECONDS.toMillis(5));
        }
        if (thread != null && thread.isAlive()) {
          LOG.warn("Watch timer of {} did not stop within 5 s", resource);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    LOG.debug("Watch cache of {} closed", resource);
  }

  /** Holds the lock. The apiserver's {@code dispatchEvent}. */
  private void dispatch(Change<T> change) {
    history.add(change);
    if (history.size() > settings.historySize()) {
      historyStart = history.poll().revision();
    }
    List<CacheWatcher<T>> blocked = null; // the usual case allocates nothing per change beyond the change
    for (CacheWatcher<T> watcher : watchers) {
      if (!watcher.nonblockingAdd(change)) {
        if (blocked == null) {
          blocked = new ArrayList<>();
        }
        blocked.add(watcher);
      }
    }
    if (blocked == null) {
      return;
    }
    long start = System.nanoTime();
    long available = budget.takeAvailable();
    long deadline = start + available;
    // all blocked watchers wait for the same deadline, so each gets a chance while time remains; after the first
    // one that had to be closed, the time is up and the others are closed at once if still full
    boolean timeLeft = true;
    for (CacheWatcher<T> watcher : blocked) {
      if (timeLeft && available > 0) {
        dispatchWaits.increment();
      }
      boolean served = timeLeft ? watcher.add(change, deadline) : watcher.add(change);
      timeLeft &= served;
    }
    budget.returnUnused(available - (System.nanoTime() - start));
  }

  private void forget(CacheWatcher<T> watcher, boolean drain) {
    watchers.remove(watcher);
    watcher.stop(drain);
  }

  /** Holds the lock. */
  private long nextRevision(String resourceVersion) {
    revision = Math.max(revision + 1, parse(resourceVersion));
    return revision;
  }

  /** The same version, or an older one when both are decimal numbers (the API server's versions of one object). */
  private static boolean isNotNewer(String version, String cached) {
    if (version == null) {
      return false;
    }
    long parsed = parse(version);
    return version.equals(cached) || (parsed > 0 && parsed < parse(cached));
  }

  private static String key(String namespace, String name) {
    return namespace + "/" + name;
  }

  /** Resource versions that are not decimal numbers get the next revision. */
  private static long parse(String resourceVersion) {
    if (resourceVersion == null) {
      return 0;
    }
    try {
      return Math.max(0, Long.parseLong(resourceVersion));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private static long parseRequested(String resourceVersion) {
    try {
      long parsed = Long.parseLong(resourceVersion);
      if (parsed >= 0) {
        return parsed;
      }
    } catch (NumberFormatException e) {
      // reported below with the value
    }
    throw new IllegalArgumentException("resourceVersion must be a non-negative decimal number: " + resourceVersion);
  }
}
