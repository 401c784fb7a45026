package dev.nodelet.store.watch.internal;

import static dev.nodelet.store.watch.internal.StoreContext.LOG;

import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.kube.watch.ReflectorException;
import dev.nodelet.kube.watch.ReflectorListener;
import dev.nodelet.kube.watch.Reflectors;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The reflectors of one store's items: opened off the registering thread, and what each reports installed in its item,
 * written to disk and told to the listener.
 *
 * <p>Registering a pod only queues the openings and wakes no thread: the first get that waits for a sync opens what is
 * queued on its own thread (the kubelet reads a pod's objects right after registering it), and the timer opens what
 * no get has within {@value StoreTimer#OPEN_INTERVAL_MILLIS} ms.
 */
final class ItemWatches<T extends HasMetadata> {

  private final StoreContext<T> store;
  private final Reflectors reflectors;
  /** Told of every answer of the API server (see {@link DiskRestore#answered()}). */
  private final Runnable answered;
  /** Reflectors to open ({@link #openLater}). */
  private final Queue<Opening<T>> openings = new ConcurrentLinkedQueue<>();
  /** Items whose copy the listener is to hear of again ({@link #reportLater}). */
  private final Queue<WatchItem<T>> retell = new ConcurrentLinkedQueue<>();

  ItemWatches(StoreContext<T> store, Reflectors reflectors, Runnable answered) {
    this.store = store;
    this.reflectors = reflectors;
    this.answered = answered;
  }

  /** An item whose run's reflector is still to be opened. */
  private record Opening<T extends HasMetadata>(WatchItem<T> item, int run) {
  }

  /**
   * Queues the opening of a run's reflector, for the next get that waits for a sync or the timer's next tick; a run
   * stopped before its turn (the pod went again) opens nothing.
   */
  void openLater(WatchItem<T> item, int run) {
    openings.add(new Opening<>(item, run));
  }

  /**
   * Has the listener hear of the copy the item holds then, off the registering thread: at the timer's next tick or
   * the next get that waits for a sync, whichever comes first.
   */
  void reportLater(WatchItem<T> item) {
    retell.add(item);
  }

  /** Tells the listener of the copies that {@link #reportLater} queued, under each item's reports lock. */
  private void reportQueued() {
    WatchItem<T> item;
    while ((item = retell.poll()) != null) {
      synchronized (item.reports) {
        WatchItem.Snapshot<T> current = item.snapshot;
        if (!store.stopped && current != null && current.object() != null) {
          T object = current.object();
          store.tell(() -> store.listener.changed(object));
        }
      }
    }
  }

  /**
   * Opens every queued reflector and reports what is queued for the listener; on the timer, on a get that waits for
   * a sync, and at every sweep.
   */
  void openQueued() {
    reportQueued();
    Opening<T> next;
    while ((next = openings.poll()) != null) {
      try {
        if (!store.stopped && next.item().isRun(next.run())) {
          open(next.item(), next.run(), null);
        }
      } catch (RuntimeException e) {
        // one broken opening must not stop the queue: the item's next get starts it again
        LOG.error("Cannot watch {} {}/{}", store.type, next.item().namespace, next.item().name, e);
        if (next.item().stop()) {
          store.settings.budget().release(next.item());
        }
      }
    }
  }

  /** Forgets what is queued: the store closed. */
  void clear() {
    openings.clear();
    retell.clear();
  }

  /**
   * Opens the reflector of a run: a fresh sync, or, for a copy read back from disk, a watch from its
   * resourceVersion (a 410 makes the reflector list). Never waits for the network.
   */
  void open(WatchItem<T> item, int run, T restored) {
    ItemListener events = new ItemListener(item, run, restored);
    Reflector<T> reflector;
    try {
      Reflector.Builder<T> builder = reflectors.reflector(store.type.type()).namespace(item.namespace)
          .fieldSelector("metadata.name=" + item.name).listener(events);
      if (restored != null) {
        builder.resumeFrom(restored.getMetadata().getResourceVersion(), List.of(restored));
      }
      reflector = builder.start();
    } catch (IllegalStateException e) {
      // the reflectors were closed under this store (the connection was replaced): gets fail with the reason
      item.failed(run, restored == null, e);
      return;
    }
    if (!item.watching(run, reflector)) {
      reflector.close();
    }
  }

  private void listed(WatchItem<T> item, int run, T object, String version) {
    synchronized (item.reports) {
      WatchItem.Snapshot<T> before = item.snapshot;
      // on disk before a get can return it
      write(item, run, object);
      if (!item.observed(run, object, version)) {
        return;
      }
      answered.run();
      if (object != null) {
        store.tell(() -> store.listener.changed(object));
      } else if (before != null && before.object() != null) {
        // a relist no longer finds what the lost watch last saw; the deletion's version is unknown
        store.tell(() -> store.listener.deleted(item.namespace, item.name, null));
      }
    }
  }

  /** Writes what a run of the item saw to disk (null: no such object), unless that run is over. */
  private void write(WatchItem<T> item, int run, T object) {
    if (!item.isRun(run)) {
      return;
    }
    if (object != null) {
      store.disk.put(object);
    } else {
      store.disk.remove(item.namespace, item.name);
    }
  }

  /**
   * What the reflector of one run of an item reports, one callback at a time, in order. A (re)list reports the
   * difference to the state before and then its sync: the object it found is installed at the sync, as a list's
   * answer; between syncs every change is a watch event.
   */
  private final class ItemListener implements ReflectorListener<T> {
    private final WatchItem<T> item;
    private final int run;
    /** The object as the reflector reported it last, null if there is none. */
    private T current;
    /** True until the (re)list's sync: changes are the difference of a list, not watch events. */
    private boolean listing;

    ItemListener(WatchItem<T> item, int run, T restored) {
      this.item = item;
      this.run = run;
      this.current = restored;
      this.listing = restored == null;
    }

    @Override
    public void onAdd(T object) {
      changed(object);
    }

    @Override
    public void onUpdate(T oldObject, T newObject) {
      changed(newObject);
    }

    private void changed(T object) {
      current = object;
      if (listing) {
        return;
      }
      long received = System.nanoTime();
      synchronized (item.reports) {
        write(item, run, object);
        if (item.observed(run, object, object.getMetadata().getResourceVersion())) {
          store.recorder.visible(received);
          answered.run();
          store.tell(() -> store.listener.changed(object));
        }
      }
    }

    @Override
    public void onDelete(T object) {
      current = null;
      if (listing) {
        return;
      }
      long received = System.nanoTime();
      // the watch's DELETED event carries the version of the deletion
      String version = object.getMetadata().getResourceVersion();
      synchronized (item.reports) {
        write(item, run, null);
        if (item.observed(run, null, version)) {
          store.recorder.visible(received);
          answered.run();
          store.tell(() -> store.listener.deleted(item.namespace, item.name, version));
        }
      }
    }

    @Override
    public void onSynced(String resourceVersion) {
      listing = false;
      store.recorder.synced.inc();
      listed(item, run, current, resourceVersion);
    }

    @Override
    public void onBookmark(String resourceVersion) {
      synchronized (item.reports) {
        T confirmed = item.progressed(run, resourceVersion);
        if (confirmed != null) {
          // the copy from disk is current: reported as any object a watch delivers
          store.tell(() -> store.listener.changed(confirmed));
        }
      }
      answered.run();
    }

    @Override
    public void onRestart(String resourceVersion) {
      store.recorder.restarted.inc();
      item.reopened(run);
      answered.run();
    }

    @Override
    public void onGone(String resourceVersion) {
      // 410 Gone: the reflector lists again; its difference and sync follow
      listing = true;
      store.recorder.relisted.inc();
      item.failed(run, true, new ReflectorException("the resourceVersion " + resourceVersion + " of " + store.type
          + " " + item.namespace + "/" + item.name + " is gone (410); listing again", 410, null));
      answered.run();
    }

    @Override
    public void onError(ReflectorException error) {
      if (listing) {
        store.recorder.syncFailed.inc();
        store.recorder.relisted.inc();
      }
      item.failed(run, listing, error);
      LOG.debug("{} of {} {}/{} failed: {}", listing ? "List" : "Watch", store.type, item.namespace, item.name,
          error.getMessage());
    }
  }
}
