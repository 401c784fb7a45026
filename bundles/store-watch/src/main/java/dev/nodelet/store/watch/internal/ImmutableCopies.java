package dev.nodelet.store.watch.internal;

import static dev.nodelet.store.watch.internal.StoreContext.LOG;
import static dev.nodelet.store.watch.internal.StoreContext.close;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Immutable objects: once a get sees one, its copy is kept and its watch ends; before a newly registered pod is served
 * the kept copy, a GET checks that the object still has the copy's UID, since an immutable object can be deleted and
 * re-created under the same name (kubernetes#131589).
 */
final class ImmutableCopies<T extends HasMetadata> {

  private final StoreContext<T> store;
  /** For the GET that checks an immutable copy again. */
  private final KubernetesClient client;
  private final WatchSlots<T> slots;

  ImmutableCopies(StoreContext<T> store, KubernetesClient client, WatchSlots<T> slots) {
    this.store = store;
    this.client = client;
    this.slots = slots;
  }

  /** Keeps the copy of an object a get found immutable and ends its watch, the first time. */
  void keep(WatchItem<T> item, T object) {
    if (store.type.isImmutable(object) && item.makeImmutable(object)) {
      close(item.takeReflector());
      store.settings.budget().release(item);
      LOG.debug("Stopped watching {} {}/{}: the object is immutable", store.type, item.namespace, item.name);
    }
  }

  /**
   * Checks the kept copy of an item a pod registered with again: the same UID keeps it; otherwise the listener hears
   * of the deletion (and of the re-created object) and the item is watched again.
   */
  void verify(WatchItem<T> item) {
    String uid = item.uidToVerify();
    if (uid == null) {
      return;
    }
    T live = client.resources(store.type.type()).inNamespace(item.namespace).withName(item.name).get();
    String liveUid = live == null ? null : live.getMetadata().getUid();
    synchronized (item.reports) {
      if (item.verified(uid, liveUid)) {
        LOG.debug("Watching {} {}/{} again: the immutable object was replaced or deleted", store.type,
            item.namespace, item.name);
        // the kept object is gone; a re-created one is another object
        store.listener.deleted(item.namespace, item.name, null);
        store.disk.remove(item.namespace, item.name);
        if (live != null) {
          store.listener.changed(live);
          store.disk.put(live);
        }
        if (!store.stopped) {
          slots.start(item);
        }
      }
    }
  }
}
