package dev.nodelet.store.watch.internal;

import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.store.watch.WatchStoreStrategy;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.ToLongFunction;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code watch} strategy as a service. A new configuration does not re-activate it: a valid one builds a new
 * strategy for the stores created from then on (the Nodelet managers take fresh stores when the service's properties
 * change; the strategy before stops its watches and sweep timer with its last store), an invalid one is refused with
 * an error naming the key and the last good configuration stays in force. An invalid configuration at activation
 * fails the activation. A new client re-activates it; deactivation stops every watch and the sweep timer.
 */
@Component(service = StoreStrategy.class, configurationPid = WatchStrategyComponent.PID,
    property = StoreStrategy.PROPERTY + "=watch")
@Designate(ocd = WatchStrategyConfiguration.class)
public final class WatchStrategyComponent implements StoreStrategy {

  public static final String PID = "dev.nodelet.store.watch";

  static final String RESYNC_INTERVAL = "resync.interval.seconds";
  static final String SYNC_WAIT = "sync.wait.millis";
  /** A day: the idle time is five of these, and far longer overflows the clock arithmetic. */
  static final long MAX_RESYNC_INTERVAL_SECONDS = 24 * 60 * 60;
  /** Ten minutes: a get blocks this long at most while an object's first list is awaited. */
  static final long MAX_SYNC_WAIT_MILLIS = 10 * 60 * 1000;

  private static final Logger LOG = LoggerFactory.getLogger(WatchStrategyComponent.class);

  /**
   * A validated configuration.
   *
   * @param resyncIntervalSeconds {@code resync.interval.seconds}
   * @param syncWaitMillis {@code sync.wait.millis}
   */
  record Settings(long resyncIntervalSeconds, long syncWaitMillis) {

    /** @throws IllegalArgumentException naming the key that is wrong and why */
    static Settings from(WatchStrategyConfiguration config) {
      return new Settings(
          within(RESYNC_INTERVAL, WatchStrategyConfiguration::resync_interval_seconds, config, 1,
              MAX_RESYNC_INTERVAL_SECONDS, "seconds"),
          within(SYNC_WAIT, WatchStrategyConfiguration::sync_wait_millis, config, 1, MAX_SYNC_WAIT_MILLIS,
              "milliseconds"));
    }

    private static long within(String key, ToLongFunction<WatchStrategyConfiguration> read,
        WatchStrategyConfiguration config, long min, long max, String unit) {
      long value;
      try {
        value = read.applyAsLong(config);
      } catch (RuntimeException e) {
        // DS and the converter fail on the first read of a value they cannot convert
        throw new IllegalArgumentException(key + ": not a whole number of " + unit + " (" + e.getMessage() + ")");
      }
      if (value < min || value > max) {
        throw new IllegalArgumentException(key + ": must be between " + min + " and " + max + " " + unit + ", was "
            + value);
      }
      return value;
    }

    @Override
    public String toString() {
      return RESYNC_INTERVAL + "=" + resyncIntervalSeconds + ", " + SYNC_WAIT + "=" + syncWaitMillis;
    }
  }

  private final KubernetesClient client;
  private final Generations strategies;
  private volatile Settings settings;

  /**
   * @throws IllegalArgumentException if the configuration is invalid
   */
  @Activate
  public WatchStrategyComponent(@Reference KubernetesClient client, WatchStrategyConfiguration config) {
    this.client = client;
    Settings checked;
    try {
      checked = Settings.from(config);
    } catch (IllegalArgumentException e) {
      LOG.error("Configuration {} is invalid, the watch store strategy does not start: {}", PID, e.getMessage());
      throw builderRefusal(client, config).orElse(e);
    }
    this.settings = checked;
    this.strategies = new Generations(build(checked));
    LOG.info("Watch store strategy active: resync interval {} s, sync wait {} ms", checked.resyncIntervalSeconds(),
        checked.syncWaitMillis());
  }

  /** A value the builder refuses itself fails the activation with the builder's message, as it always did. */
  private static Optional<IllegalArgumentException> builderRefusal(KubernetesClient client,
      WatchStrategyConfiguration config) {
    try {
      WatchStoreStrategy.builder(client).resyncInterval(Duration.ofSeconds(config.resync_interval_seconds()))
          .syncWait(Duration.ofMillis(config.sync_wait_millis()));
      return Optional.empty();
    } catch (IllegalArgumentException e) {
      return Optional.of(e);
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  /** Applies a valid configuration, refuses an invalid one; never throws. */
  @Modified
  void modified(WatchStrategyConfiguration config) {
    Settings next;
    try {
      next = Settings.from(config);
    } catch (IllegalArgumentException e) {
      LOG.error("Configuration {} refused, the watch store strategy keeps its last good configuration ({}): {}",
          PID, settings, e.getMessage());
      return;
    }
    if (next.equals(settings)) {
      return;
    }
    strategies.replace(build(next));
    settings = next;
    LOG.info("Watch store strategy reconfigured: resync interval {} s, sync wait {} ms",
        next.resyncIntervalSeconds(), next.syncWaitMillis());
  }

  private WatchStoreStrategy build(Settings s) {
    return WatchStoreStrategy.builder(client)
        .resyncInterval(Duration.ofSeconds(s.resyncIntervalSeconds()))
        .syncWait(Duration.ofMillis(s.syncWaitMillis()))
        .build();
  }

  /** The configuration in force. */
  Settings settings() {
    return settings;
  }

  /** The number of strategies still open (the newest and those whose stores are still in use), for tests. */
  int openStrategies() {
    return strategies.open();
  }

  @Override
  public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type) {
    return createStore(type, ObjectStore.Listener.none());
  }

  @Override
  public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type,
      ObjectStore.Listener<? super T> listener) {
    return strategies.createStore(type, listener);
  }

  @Deactivate
  void deactivate() {
    strategies.close();
  }

  /**
   * The strategies built, one per good configuration: new stores come from the newest; an older one is closed once
   * the last store it made is closed, or when the component deactivates.
   */
  private static final class Generations {

    private static final class Generation {
      final WatchStoreStrategy strategy;
      int openStores; // guarded by Generations.this
      boolean retired; // guarded by Generations.this

      Generation(WatchStoreStrategy strategy) {
        this.strategy = strategy;
      }
    }

    // guarded by this
    private Generation current;
    private final List<Generation> retired = new ArrayList<>();

    Generations(WatchStoreStrategy first) {
      this.current = new Generation(first);
    }

    <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type,
        ObjectStore.Listener<? super T> listener) {
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

    void replace(WatchStoreStrategy next) {
      Generation old;
      synchronized (this) {
        old = current;
        current = new Generation(next);
        old.retired = true;
        if (old.openStores > 0) {
          retired.add(old);
          return;
        }
      }
      old.strategy.close();
    }

    void close() {
      List<Generation> all;
      synchronized (this) {
        all = new ArrayList<>(retired);
        all.add(current);
        retired.clear();
      }
      all.forEach(g -> g.strategy.close());
    }

    synchronized int open() {
      return retired.size() + 1;
    }

    private void release(Generation generation) {
      boolean closeNow;
      synchronized (this) {
        closeNow = --generation.openStores == 0 && generation.retired && retired.remove(generation);
      }
      if (closeNow) {
        generation.strategy.close();
      }
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
