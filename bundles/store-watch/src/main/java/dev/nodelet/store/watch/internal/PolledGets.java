package dev.nodelet.store.watch.internal;

import static dev.nodelet.store.watch.internal.StoreContext.LOG;
import static dev.nodelet.store.watch.internal.StoreContext.close;

import dev.nodelet.cache.core.ApiServerErrors;
import dev.nodelet.objectcache.CacheSyncException;
import dev.nodelet.objectcache.ObjectNotFoundException;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Objects;

/**
 * The gets of the items that the watch budget polls, by the TTL store's rules: the copy is served while younger than
 * the time-to-live and fetched again by a GET otherwise; a failed GET serves the copy held, stale. A polled item read
 * again may move back to a watch ({@link WatchSlots#promote}).
 */
final class PolledGets<T extends HasMetadata> {

  private final StoreContext<T> store;
  private final KubernetesClient client;
  private final WatchSlots<T> slots;
  /** Told of every answer of the API server (see {@link DiskRestore#answered()}). */
  private final Runnable answered;

  PolledGets(StoreContext<T> store, KubernetesClient client, WatchSlots<T> slots, Runnable answered) {
    this.store = store;
    this.client = client;
    this.slots = slots;
    this.answered = answered;
  }

  /**
   * A get of a polled item: the TTL store's rules (fetched again once the copy is older than the time-to-live; a
   * failed fetch serves the copy held, stale), then a move back to a watch if the item proves hot.
   */
  T get(WatchItem<T> item, WatchItem.Polled polled) {
    long previousRead;
    WatchItem.Snapshot<T> snapshot;
    synchronized (polled) {
      if (store.stopped) {
        throw new CacheSyncException(store.type.plural(), item.namespace, item.name, "the store is closed", null);
      }
      long at = store.clock.millis();
      if (polled.fetched < 0 || at - polled.fetched >= store.settings.polledTtl().get().toMillis()) {
        fetch(item, polled, at);
      }
      previousRead = polled.lastRead;
      // in the coarse clock of the watched items' use, so that reads within its tick trade no watches
      polled.lastRead = store.now;
      snapshot = item.snapshot;
    }
    T object = snapshot == null ? null : snapshot.object();
    if (object != null && store.type.isImmutable(object)) {
      // never watched: its copy is served from memory, as a watched one's once seen immutable
      if (item.makeImmutable(object)) {
        // a watch that was to replace the polling ends too
        close(item.takeReflector());
        store.settings.budget().release(item);
        LOG.debug("Stopped polling {} {}/{}: the object is immutable", store.type, item.namespace, item.name);
      }
      return object;
    }
    if (previousRead >= 0) {
      slots.promote(item, previousRead);
    }
    if (object == null) {
      throw new ObjectNotFoundException(store.type.plural(), item.namespace, item.name);
    }
    return object;
  }

  /** GETs a polled item and installs what it finds; with nothing to serve, a failure fails the get. */
  private void fetch(WatchItem<T> item, WatchItem.Polled polled, long at) {
    T fetched;
    try {
      fetched = client.resources(store.type.type()).inNamespace(item.namespace).withName(item.name).get();
    } catch (KubernetesClientException e) {
      polled.lastError = e;
      store.recorder.pollFailed.inc();
      WatchItem.Snapshot<T> held = item.snapshot;
      if (held == null) {
        throw ApiServerErrors.getFailed(store.type.plural(), item.namespace, item.name, e);
      }
      return;
    }
    store.recorder.polled.inc();
    answered.run();
    synchronized (item.reports) {
      WatchItem.Snapshot<T> before = item.snapshot;
      if (!item.fetched(polled, fetched, at)) {
        return;
      }
      if (fetched != null) {
        if (before == null || before.fromDisk() || before.object() == null
            || !Objects.equals(fetched.getMetadata().getResourceVersion(),
                before.object().getMetadata().getResourceVersion())) {
          store.disk.put(fetched);
        }
        store.tell(() -> store.listener.changed(fetched));
      } else {
        store.disk.remove(item.namespace, item.name);
        if (before != null && before.object() != null) {
          store.tell(() -> store.listener.deleted(item.namespace, item.name, null));
        }
      }
    }
  }

  /** How stale the copy of a polled item may be, and whether the next get fetches it. */
  PolledStaleness staleness(WatchItem<T> item, WatchItem.Polled polled) {
    WatchItem.Snapshot<T> snapshot = item.snapshot;
    return PolledStaleness.of(polled, snapshot != null && snapshot.fromDisk(), store.settings, store.clock.millis(),
        store.stopped);
  }
}
