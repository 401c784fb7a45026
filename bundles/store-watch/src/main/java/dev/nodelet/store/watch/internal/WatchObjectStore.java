package dev.nodelet.store.watch.internal;

import dev.nodelet.cache.core.ApiServerErrors;
import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.kube.watch.Reflectors;
import dev.nodelet.objectcache.CacheSyncException;
import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.persistence.DiskStore;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The watch-based store of the kubelet ({@code watch_based_manager.go}): one list+watch per referenced object, with
 * field selector {@code metadata.name=<name>}. This class keeps the references of the pods and serves the gets; its
 * parts do the rest.
 *
 * <p>Each object has its own {@link Reflector} from the {@link Reflectors} the store is given: no informer, no store or
 * indexer beside the one object, and no thread of its own. The reflector syncs (WatchList, or LIST then WATCH), resumes
 * after a cut from the last resourceVersion, lists again only on 410 Gone, and shapes its restarts through the shared
 * restart bucket. Registering a pod only queues the openings ({@link ItemWatches}). A get of a synced object takes no
 * lock and reads no clock: it reads the object's snapshot and notes the access in a clock that a timer refreshes every
 * second ({@link StoreTimer}, which also runs the idle sweep).
 *
 * <p>The listener hears every add, update and delete a watch or list sees, and what a get finds that they do not
 * tell, under the item's {@code reports} lock so that it hears them in the order observed. It also hears of a copy
 * from disk that a bookmark confirms, and, when a pod of this run references an object that until then only
 * references read back from disk held (the listener's owner ignored what it heard of it), of the copy held then. It
 * is never called from the reference methods.
 *
 * <p>With a {@link DiskStore}, every version a watch or list sees and every reference is written to disk, and a new
 * store starts with the objects a previous run stored ({@link DiskRestore}): each is served at once (state
 * {@link ObjectState#FROM_DISK}) and its reflector resumes from the stored resourceVersion without a list; the first
 * event or bookmark confirms or replaces the copy, a 410 lists again.
 *
 * <p>The strategy's {@link WatchBudget} decides which items hold a watch ({@link WatchSlots}). One without a slot is
 * polled ({@link PolledGets}): a get serves its copy while younger than the time-to-live and GETs it otherwise, as the
 * TTL store does, and a polled item read again may take the slot of a colder one. Restored items ask for a slot too.
 * An object seen immutable keeps its copy and no watch ({@link ImmutableCopies}).
 */
public final class WatchObjectStore<T extends HasMetadata> implements ObjectStore<T> {

  /** How often a get looks whether an item has synced, as the kubelet polls. */
  private static final long SYNC_POLL_MILLIS = 10;

  private final ResourceType<T> type;
  private final WatchMetrics metrics;
  /** What the parts share; its monitor guards the references and the changes of the item table. */
  private final StoreContext<T> store;
  private final DiskRestore<T> disk;
  private final ItemWatches<T> watches;
  private final WatchSlots<T> slots;
  private final PolledGets<T> polledGets;
  private final ImmutableCopies<T> immutables;
  private final StoreTimer<T> timer;
  // guarded by store
  private Runnable onClose = () -> { };

  /**
   * @param client the client of the GET that checks an immutable object again
   * @param reflectors where each object's reflector comes from
   * @param type the type of the objects
   * @param clock the clock of access times
   * @param settings the options
   * @param timer a single thread: opens queued watches, refreshes the access clock and runs the idle sweep every
   *     {@link WatchSettings#sweepInterval()} (with a zero interval, only {@link #sweep()} does the last two)
   * @param listener told of what the watches and gets observe
   * @param metrics where the store counts its lists, watches and propagation delays
   */
  public WatchObjectStore(KubernetesClient client, Reflectors reflectors, ResourceType<T> type, Clock clock,
      WatchSettings settings, ScheduledExecutorService timer, Listener<? super T> listener, WatchMetrics metrics) {
    this(client, reflectors, type, clock, settings, timer, listener, DiskStore.none(), Duration.ZERO, metrics);
  }

  /**
   * A store that keeps its objects and references on disk too, and starts with those a previous run stored.
   *
   * @param disk where the objects and references are kept
   * @param restoredGrace how long after the API server's first answer a pod whose reference was read back from disk
   *     may take to register again before its references are dropped
   * @param metrics where the store counts its lists, watches and propagation delays
   */
  public WatchObjectStore(KubernetesClient client, Reflectors reflectors, ResourceType<T> type, Clock clock,
      WatchSettings settings, ScheduledExecutorService timer, Listener<? super T> listener, DiskStore<T> disk,
      Duration restoredGrace, WatchMetrics metrics) {
    Objects.requireNonNull(disk, "disk");
    Objects.requireNonNull(restoredGrace, "restoredGrace");
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(reflectors, "reflectors");
    this.type = Objects.requireNonNull(type, "type");
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(settings, "settings");
    Objects.requireNonNull(timer, "timer");
    Objects.requireNonNull(listener, "listener");
    this.metrics = metrics;
    this.store = new StoreContext<>(type, clock, settings, timer, listener, disk,
        metrics.recorder(type.plural()));
    this.disk = new DiskRestore<>(store, restoredGrace);
    this.watches = new ItemWatches<>(store, reflectors, this.disk::answered);
    this.slots = new WatchSlots<>(store, watches);
    this.polledGets = new PolledGets<>(store, client, slots, this.disk::answered);
    this.immutables = new ImmutableCopies<>(store, client, slots);
    this.timer = new StoreTimer<>(store, watches, slots);
    metrics.opened(this);
    this.timer.start();
    this.disk.restore(slots, watches);
  }

  /** Runs once when this store closes (the strategy forgets it). */
  public void onClose(Runnable action) {
    synchronized (store) {
      this.onClose = action;
    }
  }

  @Override
  public void addReference(String namespace, String name, String podUid) {
    synchronized (store) {
      WatchItem<T> item = store.item(namespace, name);
      if (item == null) {
        // only enqueues the list: the first get waits for it
        item = new WatchItem<>(namespace, name, store.immutable, store.now);
        store.add(item);
        if (!store.stopped) {
          slots.start(item);
        }
      } else {
        item.requestVerification();
        if (item.onlyRestoredReferences()) {
          // the owner counts no pod for it until now, so it ignored what was observed of it (the copy restored
          // from disk, a bookmark that confirmed it, an event): it hears of the copy held now
          watches.reportLater(item);
        }
      }
      // a pod whose reference was read back from disk takes it over rather than adding a second one
      if (!item.restoredPods.remove(podUid)) {
        item.references.merge(podUid, 1, Integer::sum);
      }
      item.referenced = store.now;
      store.disk.addReference(namespace, name, podUid);
    }
  }

  @Override
  public void deleteReference(String namespace, String name, String podUid) {
    synchronized (store) {
      WatchItem<T> item = store.item(namespace, name);
      // a reference the pod never held is ignored, so the count cannot go negative and pin the item forever
      if (item == null || !item.references.containsKey(podUid)) {
        return;
      }
      if (item.references.merge(podUid, -1, Integer::sum) == 0) {
        item.references.remove(podUid);
        item.restoredPods.remove(podUid);
        store.disk.deleteReference(namespace, name, podUid);
      }
      if (item.references.isEmpty()) {
        store.drop(item);
      }
    }
  }

  @Override
  public T get(String namespace, String name) {
    WatchItem<T> item = store.item(namespace, name);
    if (item == null) {
      throw new NotRegisteredException(namespace, name);
    }
    // recorded whether or not the get succeeds, so that a slow sync does not look idle
    item.touch(store.now);
    WatchItem.Snapshot<T> snapshot = item.snapshot;
    if (snapshot != null && snapshot.servable()) {
      return snapshot.object();
    }
    return slowGet(item);
  }

  /** A get that may restart, verify or wait: the object is not synced, absent, immutable or under verification. */
  private T slowGet(WatchItem<T> item) {
    if (!store.stopped) {
      slots.start(item);
    }
    WatchItem.Polled polled = item.polled;
    if (polled == null) {
      polled = item.handover; // moved back to a watch that has not delivered yet
    }
    if (polled != null) {
      return polledGets.get(item, polled);
    }
    immutables.verify(item);
    watches.openQueued(); // this thread waits for the sync anyway: no need to wait for the timer's tick
    T object = awaitSync(item).object();
    if (object == null) {
      synchronized (item.reports) {
        // a watch restarted after an idle stop lists without the object but reports no deletion; checked again
        // here, since an add observed after this check is then told after this deletion
        WatchItem.Snapshot<T> current = item.snapshot;
        if (current != null && current.object() == null) {
          store.listener.deleted(item.namespace, item.name, null);
        }
      }
      throw new ObjectNotFoundException(type.plural(), item.namespace, item.name);
    }
    immutables.keep(item, object);
    return object;
  }

  private WatchItem.Snapshot<T> awaitSync(WatchItem<T> item) {
    long deadline = System.nanoTime() + store.settings.syncWait().toNanos();
    while (true) {
      WatchItem.Snapshot<T> snapshot = item.snapshot;
      if (snapshot != null) {
        return snapshot;
      }
      // a closed store starts nothing: fail at once rather than after the wait
      if (store.stopped) {
        throw new CacheSyncException(type.plural(), item.namespace, item.name, "the store is closed", null);
      }
      if (System.nanoTime() - deadline >= 0) {
        Throwable error = item.lastError();
        throw new CacheSyncException(type.plural(), item.namespace, item.name, notSyncedReason(error), error);
      }
      try {
        Thread.sleep(SYNC_POLL_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CacheSyncException(type.plural(), e);
      }
    }
  }

  /** Why an item has not synced: its last list or watch failure, if any. */
  private static String notSyncedReason(Throwable error) {
    return error == null ? "no answer from the API server yet" : ApiServerErrors.reason(error);
  }

  /** Moves polled items back to watches while the budget has room, most recently read first. */
  public void fillBudget() {
    slots.fill();
  }

  @Override
  public Optional<ObjectState> state(String namespace, String name) {
    WatchItem<T> item = store.item(namespace, name);
    return item == null ? Optional.empty() : Optional.of(item.state(store.stopped));
  }

  @Override
  public List<Restored> restoredObjects() {
    return disk.restoredObjects();
  }

  @Override
  public Optional<T> diskCopy(String namespace, String name) {
    return disk.diskCopy(namespace, name);
  }

  @Override
  public Optional<String> staleness(String namespace, String name) {
    WatchItem<T> item = store.item(namespace, name);
    if (item == null) {
      return Optional.empty();
    }
    WatchItem.Polled polled = item.polled;
    return polled != null ? polledGets.staleness(item, polled).reason() : item.staleness(store.stopped);
  }

  /** An idle item (the next get watches it again) or a polled one whose copy aged (the next get fetches it). */
  @Override
  public boolean refreshedOnNextGet(String namespace, String name) {
    WatchItem<T> item = store.item(namespace, name);
    if (item == null) {
      return false;
    }
    WatchItem.Polled polled = item.polled;
    return polled != null ? polledGets.staleness(item, polled).refreshedOnNextGet()
        : item.state(store.stopped) == ObjectState.IDLE;
  }

  @Override
  public Optional<Instant> lastAccess(String namespace, String name) {
    WatchItem<T> item = store.item(namespace, name);
    return item == null ? Optional.empty() : Optional.of(Instant.ofEpochMilli(item.lastAccess));
  }

  /**
   * Stops the watches of items that are synced and have not been read for longer than the maximum idle time, and
   * takes the clock's time for the access times that follow.
   */
  public void sweep() {
    timer.sweep();
  }

  /** Stops every watch, the sweep and the access clock; registrations stay, nothing restarts. */
  @Override
  public void close() {
    Runnable closed;
    synchronized (store) {
      if (store.stopped) {
        return;
      }
      store.stopped = true;
      store.forEach(item -> {
        item.stop();
        StoreContext.close(item.takeReflector());
        store.settings.budget().release(item);
      });
      closed = onClose;
    }
    slots.clear();
    watches.clear();
    timer.cancel();
    metrics.closed(this);
    closed.run();
  }

  /** @return the plural resource name of the objects, for metrics */
  String resource() {
    return type.plural();
  }

  /** @return how many items the watch budget serves by GETs now */
  int polledObjects() {
    return store.count(item -> item.polled != null);
  }

  /** @return how many items hold a watch open now */
  int openWatches() {
    return store.count(WatchItem::hasWatch);
  }
}
