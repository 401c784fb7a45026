package dev.nodelet.cache.core.internal;

import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchOptions;
import dev.nodelet.objectcache.WatchStatistics;
import dev.nodelet.cache.core.internal.watch.WatchHub;
import dev.nodelet.cache.core.internal.watch.WatchHubSettings;
import dev.nodelet.cache.core.internal.watch.WatchObjects;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.IntSummaryStatistics;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watch cache of a manager ({@link WatchHub}) and what feeds it: the observations of whichever store is in use,
 * and the manager's own "no registered pod references this object any more".
 *
 * <p>Only referenced objects enter the hub (a {@code get} store fetches anything it is asked for). Observations and
 * removals pass one lock together with the reference check, so a removal is never overtaken by an observation made
 * while the object was still referenced.
 *
 * <p>The hub may wait up to its dispatch budget for full watchers, and registrations must not wait: removals run on
 * one thread of their own ({@code nodelet-watch-feed-<resource>}, ended after 30 s without work). A pending removal
 * is queued once per object, so the queue never holds more entries than there are objects.
 */
final class WatchFeed<T extends HasMetadata> implements ObjectStore.Listener<T>, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(WatchFeed.class);

  private record Key(String namespace, String name) {
  }

  /**
   * What Nodelet last observed of one referenced object, for receipts: never its content.
   *
   * @param uid the object's UID
   * @param resourceVersion its resource version
   * @param lastChanged when it last changed on the API server, if known
   * @param seen when this resource version was first observed
   */
  record Observed(String uid, String resourceVersion, Optional<Instant> lastChanged, Instant seen) {
  }

  private final WatchHub<T> hub;
  private final BiPredicate<String, String> referenced;
  private final ReentrantLock lock = new ReentrantLock();
  private final Set<Key> pendingRemovals = ConcurrentHashMap.newKeySet();
  private final Map<Key, Observed> observed = new ConcurrentHashMap<>();
  private final Clock clock;
  private final ThreadPoolExecutor removals;

  /**
   * @param type the type of the objects
   * @param clock the clock of bookmarks and deadlines
   * @param referenced whether a registered pod references the object {@code (namespace, name)}; called with this
   *     feed's lock held, so it must not wait for anything that feeds this one
   * @param manualTicks true if the owner calls {@link #tick()} instead of the hub's timer thread
   */
  WatchFeed(ResourceType<T> type, Clock clock, BiPredicate<String, String> referenced, boolean manualTicks) {
    this.referenced = Objects.requireNonNull(referenced, "referenced");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.hub = new WatchHub<>(type.plural(), WatchObjects.of(type.type()), clock,
        manualTicks ? WatchHubSettings.DEFAULTS.withTickPeriod(Duration.ZERO) : WatchHubSettings.DEFAULTS);
    this.removals = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), task -> {
      Thread thread = new Thread(task, "nodelet-watch-feed-" + type.plural());
      thread.setDaemon(true);
      return thread;
    });
    removals.allowCoreThreadTimeOut(true);
  }

  @Override
  public void changed(T object) {
    ObjectMeta metadata = object.getMetadata();
    lock.lock();
    try {
      if (referenced.test(metadata.getNamespace(), metadata.getName())) {
        hub.put(object);
        observed.compute(new Key(metadata.getNamespace(), metadata.getName()), (key, before) ->
            before != null && Objects.equals(before.resourceVersion(), metadata.getResourceVersion())
                && Objects.equals(before.uid(), metadata.getUid())
                ? before
                : new Observed(metadata.getUid(), metadata.getResourceVersion(), lastChanged(metadata),
                    clock.instant()));
      }
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void deleted(String namespace, String name, String resourceVersion) {
    lock.lock();
    try {
      hub.remove(namespace, name, resourceVersion);
      observed.remove(new Key(namespace, name));
    } finally {
      lock.unlock();
    }
  }

  /**
   * No registered pod references the object any more: it leaves the watched set soon. Never waits.
   *
   * @param namespace the object's namespace
   * @param name the object's name
   */
  void unreferenced(String namespace, String name) {
    Key key = new Key(namespace, name);
    if (pendingRemovals.add(key)) {
      removals.execute(() -> removeIfUnreferenced(key));
    }
  }

  private void removeIfUnreferenced(Key key) {
    pendingRemovals.remove(key);
    lock.lock();
    try {
      // registered again meanwhile: the object stays
      if (!referenced.test(key.namespace(), key.name())) {
        hub.remove(key.namespace(), key.name(), null);
        observed.remove(key);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * @param namespace the object's namespace
   * @param name the object's name
   * @return what was last observed of a referenced object; empty if nothing yet, or if it is gone
   */
  Optional<Observed> observed(String namespace, String name) {
    return Optional.ofNullable(observed.get(new Key(namespace, name)));
  }

  /** The newest time of the object's managed fields (its last write), else its creation; empty if neither parses. */
  static Optional<Instant> lastChanged(ObjectMeta metadata) {
    Instant newest = null;
    List<ManagedFieldsEntry> entries = metadata.getManagedFields();
    if (entries != null) {
      for (ManagedFieldsEntry entry : entries) {
        Instant time = parse(entry.getTime());
        if (time != null && (newest == null || time.isAfter(newest))) {
          newest = time;
        }
      }
    }
    return Optional.ofNullable(newest != null ? newest : parse(metadata.getCreationTimestamp()));
  }

  private static Instant parse(String time) {
    if (time == null || time.isEmpty()) {
      return null;
    }
    try {
      return OffsetDateTime.parse(time).toInstant();
    } catch (DateTimeParseException e) {
      return null;
    }
  }

  Watch<T> watch(WatchOptions<? super T> options) {
    return hub.watch(options);
  }

  WatchStatistics statistics() {
    IntSummaryStatistics queued = hub.queuedEvents();
    return new WatchStatistics(hub.watcherCount(), hub.terminatedWatchers(), hub.initialEvents(), queued.getSum(),
        queued.getCount() == 0 ? 0 : queued.getMax());
  }

  /** Sends due bookmarks and ends watches past their deadline, as the hub's timer does every second. */
  void tick() {
    hub.tick();
  }

  /** Drops pending removals (every watch ends anyway), stops the removal thread and the hub. Idempotent. */
  @Override
  public void close() {
    removals.shutdownNow();
    try {
      if (!removals.awaitTermination(5, TimeUnit.SECONDS)) {
        LOG.warn("The watch feed of {} did not stop within 5 s", hub.resource());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    hub.close();
  }
}
