package dev.nodelet.objectcache.internal;

import dev.nodelet.objectcache.ObjectStore;
import io.fabric8.kubernetes.api.model.HasMetadata;

/**
 * A store in use by a manager, with the gets running on it. A retired store is closed when its last get has
 * finished, so a strategy change never fails a get that had already started.
 */
final class ActiveStore<T extends HasMetadata> {

  final String strategy;
  final ObjectStore<T> store;

  // guarded by this
  private int gets;
  private boolean retired;
  private boolean closed;

  ActiveStore(String strategy, ObjectStore<T> store) {
    this.strategy = strategy;
    this.store = store;
  }

  /** Returns false once retired: the caller must use the store that replaced this one. */
  synchronized boolean enter() {
    if (retired) {
      return false;
    }
    gets++;
    return true;
  }

  void leave() {
    boolean close;
    synchronized (this) {
      gets--;
      close = mayClose();
    }
    if (close) {
      store.close();
    }
  }

  void retire() {
    boolean close;
    synchronized (this) {
      retired = true;
      close = mayClose();
    }
    if (close) {
      store.close();
    }
  }

  private boolean mayClose() {
    if (retired && gets == 0 && !closed) {
      closed = true;
      return true;
    }
    return false;
  }
}
