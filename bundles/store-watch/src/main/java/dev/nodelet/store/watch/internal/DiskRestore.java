package dev.nodelet.store.watch.internal;

import static dev.nodelet.store.watch.internal.StoreContext.LOG;

import dev.nodelet.objectcache.ObjectStore.Restored;
import dev.nodelet.persistence.StoredObject;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a store starts with from disk: the objects a previous run stored, each served at once and its reflector
 * resumed from the stored resourceVersion without a list, and their references, which count for their pods until the
 * pods register again. Once the API server has answered, the references of pods that do not register again within
 * the restored-reference grace period are dropped, with the objects only they referenced.
 */
final class DiskRestore<T extends HasMetadata> {

  private final StoreContext<T> store;
  private final Duration restoredGrace;
  /** Set by the first answer of the API server, which starts the grace period of the restored references. */
  private final AtomicBoolean answered = new AtomicBoolean();

  DiskRestore(StoreContext<T> store, Duration restoredGrace) {
    this.store = store;
    this.restoredGrace = restoredGrace;
  }

  /** Serves what a previous run stored and resumes each watch, opened by {@code watches}, from its stored version. */
  void restore(WatchSlots<T> slots, ItemWatches<T> watches) {
    synchronized (store) {
      List<StoredObject<T>> stored = store.disk.load();
      for (StoredObject<T> entry : stored) {
        T object = entry.object();
        WatchItem<T> item = new WatchItem<>(object.getMetadata().getNamespace(), object.getMetadata().getName(),
            store.immutable, store.now);
        entry.podUids().forEach(pod -> item.references.put(pod, 1));
        item.restoredPods.addAll(entry.podUids());
        store.add(item);
        if (object.getMetadata().getResourceVersion() == null) {
          item.snapshot = new WatchItem.Snapshot<>(object, true, true);
          slots.start(item); // nothing to resume from: a fresh sync confirms or replaces the copy
        } else {
          int run = item.restore(object);
          if (slots.admit(item)) {
            watches.open(item, run, object);
          }
        }
      }
      if (!stored.isEmpty()) {
        LOG.info("Serving {} {} from disk until the API server confirms them", stored.size(), store.type);
      }
    }
  }

  /** The API server answered: from now on, restored references of pods that do not register again expire. */
  void answered() {
    if (!answered.get() && answered.compareAndSet(false, true)) {
      try {
        store.timer.schedule(this::expireRestored, restoredGrace.toMillis(), TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        // the strategy is closed
      }
    }
  }

  /** Drops the references read back from disk whose pods have not registered again. */
  private void expireRestored() {
    synchronized (store) {
      if (store.stopped) {
        return;
      }
      List<WatchItem<T>> items = new ArrayList<>();
      store.forEach(items::add);
      for (WatchItem<T> item : items) {
        for (String pod : List.copyOf(item.restoredPods)) {
          item.restoredPods.remove(pod);
          item.references.remove(pod);
        }
        if (item.references.isEmpty()) {
          store.drop(item);
        }
      }
      int forgotten = store.disk.dropRestoredPods();
      if (forgotten > 0) {
        LOG.info("Dropped the stored references of {} pods that did not register again", forgotten);
      }
    }
  }

  /** The items whose every reference was read back from disk; under the store's lock, which guards the references. */
  List<Restored> restoredObjects() {
    synchronized (store) {
      List<Restored> result = new ArrayList<>();
      store.forEach(item -> {
        if (!item.restoredPods.isEmpty() && item.restoredPods.containsAll(item.references.keySet())) {
          result.add(new Restored(item.namespace, item.name, item.restoredPods.size()));
        }
      });
      return result;
    }
  }

  /** The copy read back from disk that the item serves until the API server confirms or replaces it. */
  Optional<T> diskCopy(String namespace, String name) {
    WatchItem<T> item = store.item(namespace, name);
    WatchItem.Snapshot<T> snapshot = item == null ? null : item.snapshot;
    return snapshot != null && snapshot.fromDisk() ? Optional.ofNullable(snapshot.object()) : Optional.empty();
  }
}
