package dev.nodelet.cache.core.testing;

import dev.nodelet.cache.core.GetStrategy;
import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A strategy whose stores count references per pod like the real ones, fetch registered objects with a direct GET,
 * and write every call to one log shared by all its stores (and other strategies given the same log).
 */
public final class RecordingStrategy implements StoreStrategy {

  private final String name;
  private final KubernetesClient client;
  private final Clock clock;
  private final List<String> log;
  private final List<Store<?>> stores = new ArrayList<>();
  private volatile CountDownLatch holdGets = new CountDownLatch(0);
  private volatile CountDownLatch getsHeld = new CountDownLatch(0);

  public RecordingStrategy(String name, KubernetesClient client, List<String> log) {
    this(name, client, Clock.systemUTC(), log);
  }

  public RecordingStrategy(String name, KubernetesClient client, Clock clock, List<String> log) {
    this.name = name;
    this.client = client;
    this.clock = clock;
    this.log = log;
  }

  /** Gets block after entering the store until {@link #releaseGets()}. */
  public void holdGets() {
    getsHeld = new CountDownLatch(1);
    holdGets = new CountDownLatch(1);
  }

  public boolean awaitHeldGet() throws InterruptedException {
    return getsHeld.await(10, TimeUnit.SECONDS);
  }

  public void releaseGets() {
    holdGets.countDown();
  }

  public synchronized Store<?> store(int index) {
    return stores.get(index);
  }

  @Override
  public synchronized <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type,
      ObjectStore.Listener<? super T> listener) {
    Store<T> store = new Store<>(type, new GetStrategy(client, clock).createStore(type));
    stores.add(store);
    log(name + " create " + type);
    return store;
  }

  private void log(String entry) {
    synchronized (log) {
      log.add(entry);
    }
  }

  public final class Store<T extends HasMetadata> implements ObjectStore<T> {
    private final ResourceType<T> type;
    private final ObjectStore<T> fetch;
    private final Map<String, Map<String, Integer>> references = new HashMap<>();
    private volatile boolean closed;

    private Store(ResourceType<T> type, ObjectStore<T> fetch) {
      this.type = type;
      this.fetch = fetch;
    }

    public synchronized Map<String, Map<String, Integer>> references() {
      Map<String, Map<String, Integer>> copy = new HashMap<>();
      references.forEach((key, pods) -> copy.put(key, Map.copyOf(pods)));
      return copy;
    }

    public boolean closed() {
      return closed;
    }

    @Override
    public synchronized void addReference(String namespace, String name, String podUid) {
      log(RecordingStrategy.this.name + " add " + namespace + "/" + name + " " + podUid);
      references.computeIfAbsent(namespace + "/" + name, k -> new HashMap<>()).merge(podUid, 1, Integer::sum);
      fetch.addReference(namespace, name, podUid);
    }

    @Override
    public synchronized void deleteReference(String namespace, String name, String podUid) {
      log(RecordingStrategy.this.name + " delete " + namespace + "/" + name + " " + podUid);
      Map<String, Integer> pods = references.get(namespace + "/" + name);
      if (pods == null || !pods.containsKey(podUid)) {
        return;
      }
      fetch.deleteReference(namespace, name, podUid);
      if (pods.merge(podUid, -1, Integer::sum) == 0) {
        pods.remove(podUid);
      }
      if (pods.isEmpty()) {
        references.remove(namespace + "/" + name);
      }
    }

    @Override
    public T get(String namespace, String name) {
      synchronized (this) {
        if (closed) {
          throw new IllegalStateException(RecordingStrategy.this.name + " store closed");
        }
        if (!references.containsKey(namespace + "/" + name)) {
          throw new NotRegisteredException(namespace, name);
        }
      }
      getsHeld.countDown();
      try {
        holdGets.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      T object = fetch.get(namespace, name);
      if (closed) {
        throw new IllegalStateException(RecordingStrategy.this.name + " store closed during a get");
      }
      return object;
    }

    @Override
    public Optional<Instant> lastAccess(String namespace, String name) {
      return fetch.lastAccess(namespace, name);
    }

    @Override
    public void close() {
      closed = true;
      log(RecordingStrategy.this.name + " close " + type);
    }
  }
}
