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
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
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

  private final WatchHub<T> hub;
  private final BiPredicate<String, String> referenced;
  private final ReentrantLock lock = new ReentrantLock();
  private final Set<Key> pendingRemovals = ConcurrentHashMap.newKeySet();
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
      }
    } finally {
      lock.unlock();
    }
  }

  Watch<T> watch(WatchOptions<? super T> options) {
    return hub.watch(options);
  }

  WatchStatistics statistics() {
    return new WatchStatistics(hub.watcherCount(), hub.terminatedWatchers(), hub.initialEvents());
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
