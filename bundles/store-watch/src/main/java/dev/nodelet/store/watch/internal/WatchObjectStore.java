package dev.nodelet.store.watch.internal;

import dev.nodelet.objectcache.CacheSyncException;
import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watch-based store of the kubelet ({@code watch_based_manager.go}) on fabric8 informers, one per referenced
 * object.
 *
 * <p>The listener hears every add, update and delete of each item's watch on that watch's event thread, and what a
 * get finds that the watches do not tell. It is never called from the reference methods. All calls hold
 * {@link #reports} (never taken under this store's lock), so a get's finding and a watch event come in the order in
 * which they were observed. Lock order: {@link #reports}, then this store, then an item.
 */
public final class WatchObjectStore<T extends HasMetadata> implements ObjectStore<T> {

  private static final Logger LOG = LoggerFactory.getLogger(WatchObjectStore.class);

  /** How often a get looks whether an item has synced, as the kubelet polls. */
  private static final long SYNC_POLL_MILLIS = 10;

  private record Key(String namespace, String name) {
  }

  private final KubernetesClient client;
  private final ResourceType<T> type;
  private final Clock clock;
  private final WatchSettings settings;
  private final ScheduledFuture<?> sweeping;
  private final Listener<? super T> listener;
  /** Held while telling the listener. */
  private final Object reports = new Object();

  // guarded by this
  private final Map<Key, WatchItem<T>> items = new HashMap<>();
  private boolean stopped;
  private Runnable onClose = () -> { };

  /**
   * @param client the client to watch with
   * @param type the type of the objects
   * @param clock the clock of access times
   * @param settings the options
   * @param timer runs the idle sweep every {@link WatchSettings#sweepInterval()}
   * @param listener told of what the watches and gets observe
   */
  public WatchObjectStore(KubernetesClient client, ResourceType<T> type, Clock clock, WatchSettings settings,
      ScheduledExecutorService timer, Listener<? super T> listener) {
    this.client = Objects.requireNonNull(client, "client");
    this.type = Objects.requireNonNull(type, "type");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.listener = Objects.requireNonNull(listener, "listener");
    long sweepMillis = settings.sweepInterval().toMillis();
    this.sweeping = timer.scheduleWithFixedDelay(this::sweep, sweepMillis, sweepMillis, TimeUnit.MILLISECONDS);
  }

  /** Runs once when this store closes (the strategy forgets it). */
  public synchronized void onClose(Runnable action) {
    this.onClose = action;
  }

  @Override
  public synchronized void addReference(String namespace, String name, String podUid) {
    Key key = new Key(namespace, name);
    WatchItem<T> item = items.get(key);
    if (item == null) {
      // only starts the watch: the first get waits for its list
      item = new WatchItem<>(() -> startWatch(key), Cache.namespaceKeyFunc(namespace, name), clock.instant(),
          !stopped);
      items.put(key, item);
    } else {
      item.requestVerification();
    }
    item.references.merge(podUid, 1, Integer::sum);
  }

  @Override
  public synchronized void deleteReference(String namespace, String name, String podUid) {
    Key key = new Key(namespace, name);
    WatchItem<T> item = items.get(key);
    // a reference the pod never held is ignored, so the count cannot go negative and pin the item forever
    if (item == null || !item.references.containsKey(podUid)) {
      return;
    }
    if (item.references.merge(podUid, -1, Integer::sum) == 0) {
      item.references.remove(podUid);
    }
    if (item.references.isEmpty()) {
      item.stop();
      items.remove(key);
    }
  }

  @Override
  public T get(String namespace, String name) {
    WatchItem<T> item;
    synchronized (this) {
      item = items.get(new Key(namespace, name));
      if (item == null) {
        throw new NotRegisteredException(namespace, name);
      }
      // recorded whether or not the get succeeds, so that a slow sync does not look idle
      item.touch(clock.instant());
      if (!stopped) {
        item.restartIfNeeded();
      }
    }
    verifyImmutableCopy(namespace, name, item);
    awaitSync(item);
    Object current = item.current();
    if (current == null) {
      synchronized (reports) {
        // a watch restarted after an idle stop lists without the object but reports no deletion; checked again
        // here, since an add the watch delivers after this check is then told after this deletion
        if (item.current() == null) {
          listener.deleted(namespace, name, null);
        }
      }
      throw new ObjectNotFoundException(type.plural(), namespace, name);
    }
    T object = type.cast(current);
    if (type.isImmutable(object) && item.makeImmutable(object)) {
      LOG.debug("Stopped watching {} {}/{}: the object is immutable", type, namespace, name);
    }
    return object;
  }

  /**
   * An immutable object can be deleted and re-created under the same name (kubernetes#131589): before a newly
   * registered pod is served the kept copy, a GET checks that the object still has the copy's UID.
   */
  private void verifyImmutableCopy(String namespace, String name, WatchItem<T> item) {
    String uid = item.uidToVerify();
    if (uid == null) {
      return;
    }
    T live = client.resources(type.type()).inNamespace(namespace).withName(name).get();
    String liveUid = live == null ? null : live.getMetadata().getUid();
    // held across the restart, so the new watch's first add is told after this
    synchronized (reports) {
      boolean replaced;
      synchronized (this) {
        replaced = item.verified(uid, liveUid, !stopped);
      }
      if (replaced) {
        LOG.debug("Watching {} {}/{} again: the immutable object was replaced or deleted", type, namespace, name);
        // the kept object is gone; a re-created one is another object
        listener.deleted(namespace, name, null);
        if (live != null) {
          listener.changed(live);
        }
      }
    }
  }

  private void awaitSync(WatchItem<T> item) {
    long deadline = System.nanoTime() + settings.syncWait().toNanos();
    while (!item.synced()) {
      if (System.nanoTime() - deadline >= 0) {
        throw new CacheSyncException(type.plural());
      }
      try {
        Thread.sleep(SYNC_POLL_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CacheSyncException(type.plural(), e);
      }
    }
  }

  private SharedIndexInformer<T> startWatch(Key key) {
    SharedIndexInformer<T> informer = client.resources(type.type()).inNamespace(key.namespace())
        .withField("metadata.name", key.name()).runnableInformer(0);
    // like the kubelet's reflector, keep retrying (with backoff) also when the first list fails
    informer.exceptionHandler((started, error) -> {
      LOG.debug("Watch of {} {}/{} failed, retrying: {}", type, key.namespace(), key.name(), error.getMessage());
      return true;
    });
    informer.addEventHandler(new ResourceEventHandler<T>() {
      @Override
      public void onAdd(T object) {
        synchronized (reports) {
          listener.changed(object);
        }
      }

      @Override
      public void onUpdate(T previous, T object) {
        synchronized (reports) {
          listener.changed(object);
        }
      }

      @Override
      public void onDelete(T object, boolean finalStateUnknown) {
        // a deletion seen only by a relist carries the last version the watch saw, not the deletion's
        String version = finalStateUnknown ? null : object.getMetadata().getResourceVersion();
        synchronized (reports) {
          listener.deleted(key.namespace(), key.name(), version);
        }
      }
    });
    informer.start();
    return informer;
  }

  @Override
  public synchronized Optional<ObjectState> state(String namespace, String name) {
    WatchItem<T> item = items.get(new Key(namespace, name));
    return item == null ? Optional.empty() : Optional.of(item.state(stopped));
  }

  /** Stops the watches of items that are synced and have not been read for longer than the maximum idle time. */
  synchronized void sweep() {
    var now = clock.instant();
    items.forEach((key, item) -> {
      if (item.stopIfIdle(now, settings.maxIdleTime())) {
        LOG.debug("Stopped watching {} {}/{}: not read for {}", type, key.namespace(), key.name(),
            settings.maxIdleTime());
      }
    });
  }

  /** Stops every watch and the sweep; registrations stay, nothing restarts. */
  @Override
  public void close() {
    Runnable closed;
    synchronized (this) {
      if (stopped) {
        return;
      }
      stopped = true;
      items.values().forEach(WatchItem::stop);
      closed = onClose;
    }
    sweeping.cancel(false);
    closed.run();
  }
}
