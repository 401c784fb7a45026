package dev.nodelet.cache.core.internal;

import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.ObjectReceipt;
import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.PodReceipt;
import dev.nodelet.objectcache.RegisteredPod;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchOptions;
import dev.nodelet.objectcache.WatchStatistics;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kubelet's {@code cacheBasedManager} over a store that can be replaced at runtime.
 *
 * <p>Registrations and store swaps hold this manager's lock and only call the non-blocking reference methods of a
 * store; gets take no manager lock while they wait on a store. Lock order: this manager, then a store.
 *
 * <p>Every store reports what it observes to one {@link WatchFeed}, which outlives the stores, so watches survive a
 * strategy change. The feed asks whether an object is still referenced without this manager's lock, so that a
 * registration never waits for an event being fed.
 */
public final class StrategySwitchingManager<T extends HasMetadata> implements SwitchableObjectManager<T> {

  private static final Logger LOG = LoggerFactory.getLogger(StrategySwitchingManager.class);

  private record PodKey(String namespace, String name, String uid) {
  }

  private record ObjectKey(String namespace, String name) {
  }

  /** The stored copy of a registered pod is reduced to what unregistering needs: the names it referenced. */
  private record Registration(Set<String> names) {
  }

  /** The store in use, the name of its strategy, and whether that is the manager's own. */
  private record ActiveStore<T extends HasMetadata>(String strategy, boolean builtIn, ObjectStore<T> store) {
  }

  /** What {@link #strategy()} says while the built-in strategy answers: it behaves as {@code get}. */
  private static final String BUILT_IN_NAME = "get";

  private final ResourceType<T> type;
  private final Function<Pod, Set<String>> referencedNames;
  private final Clock clock;
  private final StoreStrategy builtIn;
  private final WatchFeed<T> feed;
  private final ManagerInstruments metrics;
  /** Times gets; null without metrics, so that an unmeasured get costs nothing more. */
  private final ManagerInstruments.Recorder recorder;

  // guarded by this
  private final Map<PodKey, Registration> pods = new LinkedHashMap<>();
  /**
   * References per object, over all pods; changed under this lock, read without it by the feed, which must not wait
   * for a registration (a registration only enqueues work).
   */
  private final Map<ObjectKey, Integer> objects = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** Replaced under this manager's lock; read without it by gets. */
  private volatile ActiveStore<T> active;

  /**
   * @param type the type of the objects
   * @param referencedNames the names of the objects a pod references
   * @param clock the clock of the watch fan-out (bookmarks, deadlines)
   * @param builtIn the strategy that answers while no other is given
   * @param manualTicks true if the owner drives the watch fan-out's timer with {@link #tick()}
   * @param metrics where the manager reports until it is closed; null for nowhere
   */
  public StrategySwitchingManager(ResourceType<T> type, Function<Pod, Set<String>> referencedNames, Clock clock,
      StoreStrategy builtIn, boolean manualTicks, ManagerInstruments metrics) {
    this.type = Objects.requireNonNull(type, "type");
    this.referencedNames = Objects.requireNonNull(referencedNames, "referencedNames");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.builtIn = Objects.requireNonNull(builtIn, "builtIn");
    this.feed = new WatchFeed<>(type, clock, this::isReferenced, manualTicks);
    this.active = new ActiveStore<>(BUILT_IN_NAME, true, builtIn.createStore(type, feed));
    this.metrics = metrics;
    // last: the metrics may read this manager from now on
    this.recorder = metrics == null ? null : metrics.add(this);
  }

  @Override
  public void tick() {
    feed.tick();
  }

  @Override
  public ResourceType<T> type() {
    return type;
  }

  @Override
  public void registerPod(Pod pod) {
    PodKey key = key(pod);
    Set<String> names = referencedNames.apply(pod);
    synchronized (this) {
      if (closed) {
        return;
      }
      Registration previous = pods.put(key, new Registration(names));
      Set<String> before = previous == null ? Set.of() : previous.names();
      ObjectStore<T> store = active.store;
      for (String name : names) {
        if (!before.contains(name)) {
          // counted first: what the store observes for it from now on is for a referenced object
          objects.merge(new ObjectKey(key.namespace(), name), 1, Integer::sum);
          store.addReference(key.namespace(), name, key.uid());
        }
      }
      for (String name : before) {
        if (!names.contains(name)) {
          release(store, key, name);
        }
      }
    }
  }

  @Override
  public synchronized void unregisterPod(Pod pod) {
    PodKey key = key(pod);
    if (closed) {
      return;
    }
    Registration stored = pods.remove(key);
    if (stored == null) {
      return;
    }
    // the names of the stored copy: the pod given here may be a later version that references other names
    ObjectStore<T> store = active.store;
    for (String name : stored.names()) {
      release(store, key, name);
    }
  }

  private void release(ObjectStore<T> store, PodKey pod, String name) {
    store.deleteReference(pod.namespace(), name, pod.uid());
    ObjectKey object = new ObjectKey(pod.namespace(), name);
    if (objects.computeIfPresent(object, (k, references) -> references == 1 ? null : references - 1) == null) {
      feed.unreferenced(pod.namespace(), name);
    }
  }

  /**
   * Lock-free: the active store answers. A strategy change closes the store it replaces at once, so a get still on
   * it may fail (a closed watch store starts nothing); the store that replaced it, which already holds every
   * registration, then answers instead.
   */
  @Override
  public T get(String namespace, String name) {
    ManagerInstruments.Recorder timing = recorder;
    if (timing == null) {
      return getFromActive(namespace, name);
    }
    long start = timing.start();
    T object;
    try {
      object = getFromActive(namespace, name);
    } catch (RuntimeException e) {
      timing.failed(start, e);
      throw e;
    }
    timing.answered(start);
    return object;
  }

  private T getFromActive(String namespace, String name) {
    while (true) {
      if (closed) {
        throw new IllegalStateException("the " + type + " manager is closed");
      }
      ActiveStore<T> current = active;
      try {
        return current.store.get(namespace, name);
      } catch (RuntimeException e) {
        if (active == current) {
          throw e;
        }
      }
    }
  }

  /** Lock-free: a removal is rechecked by the feed after the count dropped, an addition counted before its store. */
  private boolean isReferenced(String namespace, String name) {
    return objects.containsKey(new ObjectKey(namespace, name));
  }

  @Override
  public String strategy() {
    return active.strategy;
  }

  @Override
  public boolean builtInStrategy() {
    return active.builtIn;
  }

  @Override
  public void useStrategy(String name, StoreStrategy strategy) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(strategy, "strategy");
    swap(name, false, strategy);
  }

  @Override
  public void useBuiltInStrategy() {
    swap(BUILT_IN_NAME, true, builtIn);
  }

  private void swap(String name, boolean isBuiltIn, StoreStrategy strategy) {
    ActiveStore<T> previous;
    ActiveStore<T> next;
    synchronized (this) {
      if (closed) {
        return;
      }
      ObjectStore<T> store = strategy.createStore(type, feed);
      // the new store knows every registration before it answers its first get
      pods.forEach((pod, registration) -> registration.names()
          .forEach(object -> store.addReference(pod.namespace(), object, pod.uid())));
      previous = active;
      next = new ActiveStore<>(name, isBuiltIn, store);
      active = next;
    }
    previous.store.close();
    LOG.info("The {} manager now uses the {} strategy (was {})", type, label(next), label(previous));
  }

  /** A strategy as the log names it. */
  private static String label(ActiveStore<?> store) {
    return store.builtIn ? "built-in " + store.strategy : store.strategy;
  }

  @Override
  public Watch<T> watch(WatchOptions<T> options) {
    Objects.requireNonNull(options, "options");
    if (closed) {
      throw new IllegalStateException("the " + type + " manager is closed");
    }
    return feed.watch(options);
  }

  @Override
  public WatchStatistics watchStatistics() {
    return feed.statistics();
  }

  @Override
  public synchronized List<RegisteredPod> registeredPods() {
    List<RegisteredPod> result = new ArrayList<>(pods.size());
    pods.forEach((pod, registration) -> result.add(
        new RegisteredPod(pod.namespace(), pod.name(), pod.uid(), List.copyOf(registration.names()))));
    return result;
  }

  @Override
  public List<CachedObject> objects() {
    ActiveStore<T> current;
    Map<ObjectKey, Integer> snapshot;
    synchronized (this) {
      current = active;
      snapshot = new HashMap<>(objects);
    }
    List<CachedObject> result = new ArrayList<>(snapshot.size());
    snapshot.forEach((key, references) -> result.add(cachedObject(current, key, references)));
    // served too: objects that only pods of a previous run reference, read back from disk
    for (ObjectStore.Restored restored : current.store.restoredObjects()) {
      ObjectKey key = new ObjectKey(restored.namespace(), restored.name());
      if (!snapshot.containsKey(key)) {
        result.add(cachedObject(current, key, restored.pods()));
      }
    }
    result.sort(Comparator.comparing(CachedObject::namespace).thenComparing(CachedObject::name));
    return result;
  }

  private CachedObject cachedObject(ActiveStore<T> current, ObjectKey key, int references) {
    return new CachedObject(key.namespace(), key.name(), current.strategy,
        current.store.state(key.namespace(), key.name()), references,
        current.store.lastAccess(key.namespace(), key.name()));
  }

  @Override
  public List<PodReceipt> receipts() {
    ActiveStore<T> current;
    Map<PodKey, Registration> snapshot;
    synchronized (this) {
      current = active;
      snapshot = new LinkedHashMap<>(pods);
    }
    List<PodReceipt> result = new ArrayList<>(snapshot.size());
    snapshot.forEach((pod, registration) -> {
      List<ObjectReceipt> receipts = new ArrayList<>(registration.names().size());
      for (String name : registration.names()) {
        receipts.add(receipt(current, pod.namespace(), name));
      }
      result.add(new PodReceipt(pod.namespace(), pod.name(), pod.uid(), receipts));
    });
    return result;
  }

  private ObjectReceipt receipt(ActiveStore<T> current, String namespace, String name) {
    Optional<String> stale = current.store.staleness(namespace, name);
    Optional<ObjectState> state = current.store.state(namespace, name);
    boolean refreshed = false;
    if (stale.isEmpty() && state.orElse(null) == ObjectState.STOPPED) {
      stale = Optional.of("its store is stopped");
    } else if (stale.isPresent()) {
      refreshed = current.store.refreshedOnNextGet(namespace, name);
    }
    Optional<T> diskCopy = state.orElse(null) == ObjectState.FROM_DISK
        ? current.store.diskCopy(namespace, name) : Optional.empty();
    if (diskCopy.isPresent()) {
      // what the pod is served is the copy from disk, which may be stale even while the store reports nothing wrong
      ObjectMeta metadata = diskCopy.get().getMetadata();
      String why = "served from the copy a previous run stored on disk, which the API server has not confirmed yet"
          + stale.map(reason -> ": " + reason).orElse("");
      return new ObjectReceipt(type.plural(), namespace, name, Optional.ofNullable(metadata.getUid()),
          Optional.ofNullable(metadata.getResourceVersion()), WatchFeed.lastChanged(metadata), Optional.empty(),
          current.strategy, Optional.of(why), state, false); // unconfirmed: not ready until the API server answers
    }
    Optional<WatchFeed.Observed> observed = feed.observed(namespace, name);
    return new ObjectReceipt(type.plural(), namespace, name, observed.map(WatchFeed.Observed::uid),
        observed.map(WatchFeed.Observed::resourceVersion), observed.flatMap(WatchFeed.Observed::lastChanged),
        observed.map(WatchFeed.Observed::seen), current.strategy, stale, state, refreshed);
  }

  @Override
  public void close() {
    ActiveStore<T> last;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      last = active;
    }
    if (metrics != null) {
      metrics.remove(this);
    }
    last.store.close();
    feed.close();
  }

  private static PodKey key(Pod pod) {
    Objects.requireNonNull(pod, "pod");
    ObjectMeta metadata = pod.getMetadata();
    if (metadata == null || isEmpty(metadata.getNamespace()) || isEmpty(metadata.getName())) {
      throw new IllegalArgumentException("a pod needs metadata.namespace and metadata.name, got "
          + (metadata == null ? "no metadata" : Optional.ofNullable(metadata.getNamespace()).orElse("") + "/"
              + Optional.ofNullable(metadata.getName()).orElse("")));
    }
    // the API server always sets a UID; a pod built by hand without one is still keyed consistently
    return new PodKey(metadata.getNamespace(), metadata.getName(),
        metadata.getUid() == null ? "" : metadata.getUid());
  }

  private static boolean isEmpty(String s) {
    return s == null || s.isEmpty();
  }
}
