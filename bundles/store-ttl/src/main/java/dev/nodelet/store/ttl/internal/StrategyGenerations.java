package dev.nodelet.store.ttl.internal;

import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The strategies a component built, one per good configuration: new stores come from the newest; an older one is
 * closed once the last store it made is closed (managers move to fresh stores when the service's properties change,
 * and close the old ones when their gets are done), or when the component deactivates.
 *
 * @param <S> the strategy type
 */
final class StrategyGenerations<S extends StoreStrategy & AutoCloseable> {

  private final class Generation {
    final S strategy;
    int openStores; // guarded by StrategyGenerations.this
    boolean retired; // guarded by StrategyGenerations.this

    Generation(S strategy) {
      this.strategy = strategy;
    }
  }

  // guarded by this
  private Generation current;
  private final List<Generation> retired = new ArrayList<>();

  StrategyGenerations(S first) {
    this.current = new Generation(first);
  }

  /** A store of the newest strategy; closing it may close an older strategy. */
  <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type, ObjectStore.Listener<? super T> listener) {
    Generation generation;
    synchronized (this) {
      generation = current;
      generation.openStores++;
    }
    try {
      return new CountedStore<>(generation.strategy.createStore(type, listener), () -> release(generation));
    } catch (RuntimeException e) {
      release(generation);
      throw e;
    }
  }

  /** Makes {@code next} the strategy of new stores; the one before closes when its last store does. */
  void replace(S next) {
    Generation old;
    boolean closeNow;
    synchronized (this) {
      old = current;
      current = new Generation(next);
      old.retired = true;
      closeNow = old.openStores == 0;
      if (!closeNow) {
        retired.add(old);
      }
    }
    if (closeNow) {
      close(old.strategy);
    }
  }

  /** Closes every strategy, also those whose stores are still open. */
  void close() {
    List<Generation> all;
    synchronized (this) {
      all = new ArrayList<>(retired);
      all.add(current);
      retired.clear();
    }
    all.forEach(g -> close(g.strategy));
  }

  /** The number of strategies still open, for tests. */
  synchronized int open() {
    return retired.size() + 1;
  }

  private void release(Generation generation) {
    boolean closeNow;
    synchronized (this) {
      closeNow = --generation.openStores == 0 && generation.retired && retired.remove(generation);
    }
    if (closeNow) {
      close(generation.strategy);
    }
  }

  private static void close(AutoCloseable strategy) {
    try {
      strategy.close();
    } catch (Exception e) {
      throw new IllegalStateException("closing " + strategy + " failed", e);
    }
  }

  /** Forwards to a store and tells its owner, once, that it closed. */
  private static final class CountedStore<T extends HasMetadata> implements ObjectStore<T> {
    private final ObjectStore<T> store;
    private final Runnable onClose;
    private final AtomicBoolean closed = new AtomicBoolean();

    CountedStore(ObjectStore<T> store, Runnable onClose) {
      this.store = store;
      this.onClose = onClose;
    }

    @Override
    public void addReference(String namespace, String name, String podUid) {
      store.addReference(namespace, name, podUid);
    }

    @Override
    public void deleteReference(String namespace, String name, String podUid) {
      store.deleteReference(namespace, name, podUid);
    }

    @Override
    public T get(String namespace, String name) {
      return store.get(namespace, name);
    }

    @Override
    public Optional<ObjectState> state(String namespace, String name) {
      return store.state(namespace, name);
    }

    @Override
    public Optional<Instant> lastAccess(String namespace, String name) {
      return store.lastAccess(namespace, name);
    }

    @Override
    public void close() {
      try {
        store.close();
      } finally {
        if (closed.compareAndSet(false, true)) {
          onClose.run();
        }
      }
    }
  }
}
