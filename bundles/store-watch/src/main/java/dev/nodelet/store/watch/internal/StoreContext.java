package dev.nodelet.store.watch.internal;

import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.objectcache.ObjectStore.Listener;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.persistence.DiskStore;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the parts of one {@link WatchObjectStore} share: its type, options, clock, timer, listener, disk and metrics,
 * its items by namespace and name, the coarse clock of access times and whether it is closed.
 *
 * <p>The items are read by gets without a lock and changed under this object's monitor, which also guards the
 * references of every item.
 */
final class StoreContext<T extends HasMetadata> {

  /** Every part logs as the store, so that one log category still covers it. */
  static final Logger LOG = LoggerFactory.getLogger(WatchObjectStore.class);

  final ResourceType<T> type;
  /** The type's immutability test, one instance for all the items. */
  final Predicate<T> immutable;
  final Clock clock;
  final WatchSettings settings;
  final ScheduledExecutorService timer;
  final Listener<? super T> listener;
  final DiskStore<T> disk;
  final WatchMetrics.Recorder recorder;
  /** Namespace → name → item: read by gets without a lock, changed under this object's lock. */
  private final Map<String, Map<String, WatchItem<T>>> items = new ConcurrentHashMap<>();
  /** The clock's millis, refreshed every second and by each sweep. */
  volatile long now;
  volatile boolean stopped;

  StoreContext(ResourceType<T> type, Clock clock, WatchSettings settings, ScheduledExecutorService timer,
      Listener<? super T> listener, DiskStore<T> disk, WatchMetrics.Recorder recorder) {
    this.type = type;
    this.immutable = type::isImmutable;
    this.clock = clock;
    this.settings = settings;
    this.timer = timer;
    this.listener = listener;
    this.disk = disk;
    this.recorder = recorder;
    this.now = clock.millis();
  }

  /** @return the item of the object, or null if no pod references it */
  WatchItem<T> item(String namespace, String name) {
    Map<String, WatchItem<T>> names = items.get(namespace);
    return names == null ? null : names.get(name);
  }

  /** Adds an item; guarded by this. */
  void add(WatchItem<T> item) {
    items.computeIfAbsent(item.namespace, n -> new ConcurrentHashMap<>()).put(item.name, item);
  }

  /** Every item, in no order. */
  void forEach(Consumer<WatchItem<T>> action) {
    items.values().forEach(names -> names.values().forEach(action));
  }

  /** @return how many items pass {@code test} now */
  int count(Predicate<WatchItem<T>> test) {
    int count = 0;
    for (Map<String, WatchItem<T>> names : items.values()) {
      for (WatchItem<T> item : names.values()) {
        if (test.test(item)) {
          count++;
        }
      }
    }
    return count;
  }

  /** Stops and forgets an item no pod references; guarded by this. */
  void drop(WatchItem<T> item) {
    item.stop();
    close(item.takeReflector());
    settings.budget().release(item);
    Map<String, WatchItem<T>> names = items.get(item.namespace);
    if (names != null) {
      names.remove(item.name);
      if (names.isEmpty()) {
        items.remove(item.namespace);
      }
    }
  }

  /** Tells the listener, which must not break the watch that reports to it. */
  void tell(Runnable report) {
    try {
      report.run();
    } catch (RuntimeException e) {
      LOG.warn("The listener of the {} store failed", type, e);
    }
  }

  static void close(Reflector<?> reflector) {
    if (reflector != null) {
      reflector.close();
    }
  }
}
