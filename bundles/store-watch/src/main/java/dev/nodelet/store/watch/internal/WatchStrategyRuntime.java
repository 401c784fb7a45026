package dev.nodelet.store.watch.internal;

import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.kube.watch.Reflectors;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.persistence.DiskStore;
import dev.nodelet.persistence.Persistence;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A running {@code watch} strategy: its timer, the engine it may have built, the budget its stores share, and the
 * stores it created and has not seen close. The exported {@code WatchStoreStrategy} and the strategy component both
 * run on one; the component retires it ({@link #closeWhenUnused()}, its {@code Running}'s retiring hook) when a new
 * configuration replaces it.
 */
public final class WatchStrategyRuntime implements StoreStrategy, AutoCloseable {

  /** The retry delays of the engine the strategy builds: 250 ms doubling to 2 s, with jitter. */
  private static final Duration RETRY_INITIAL = Duration.ofMillis(250);
  private static final Duration RETRY_MAX = Duration.ofSeconds(2);

  private final WatchBudget budget;
  private final KubernetesClient client;
  private final Reflectors reflectors;
  /** The engine the strategy built, closed with it; null when the reflectors were given. */
  private final ReflectorEngine ownEngine;
  private final Clock clock;
  private final WatchSettings settings;
  private final WatchMetrics metrics;
  private final ScheduledThreadPoolExecutor timer;
  private final Persistence persistence;
  private final Duration restoredGrace;
  private final Set<WatchObjectStore<?>> openStores = ConcurrentHashMap.newKeySet();
  private volatile boolean retiring;
  /** With manual ticks: when, by the clock, the slots of watches that a resize or a closed store ended are free. */
  private volatile long refillAt = -1;
  private final AtomicBoolean closed = new AtomicBoolean();

  /** @param options the options; later changes to them do not reach this strategy */
  public WatchStrategyRuntime(WatchStrategyOptions options) {
    this.client = options.client;
    if (options.reflectors != null) {
      this.ownEngine = null;
      this.reflectors = options.reflectors;
    } else {
      // retries sooner than the service's default, so that a restarted server is seen quickly
      this.ownEngine = ReflectorEngine.builder(options.client).backoff(RETRY_INITIAL, RETRY_MAX).build();
      this.reflectors = ownEngine;
    }
    this.clock = options.clock;
    this.budget = new WatchBudget(options.maxWatches, options.clock::millis);
    this.settings = new WatchSettings(options.maxIdleTime(), options.syncWait, options.sweepInterval, budget,
        polledTtl(options.polledTtl, options.nodeAnnotations));
    this.metrics = options.metrics;
    this.persistence = options.persistence;
    this.restoredGrace = options.restoredGrace;
    this.timer = new ScheduledThreadPoolExecutor(1, r -> {
      Thread thread = new Thread(r, "nodelet-store-watch-sweep");
      thread.setDaemon(true);
      return thread;
    });
    this.timer.setRemoveOnCancelPolicy(true);
  }

  /** The node's annotation in whole seconds when it parses (negative means 0), else the default; a year at most. */
  private static Supplier<Duration> polledTtl(Duration defaultTtl,
      Optional<Function<String, Optional<String>>> annotations) {
    if (annotations.isEmpty()) {
      return () -> defaultTtl;
    }
    Function<String, Optional<String>> annotation = annotations.get();
    return () -> annotation.apply(WatchSettings.TTL_ANNOTATION).flatMap(WatchStrategyRuntime::seconds)
        .orElse(defaultTtl);
  }

  private static Optional<Duration> seconds(String value) {
    try {
      long seconds = Long.parseLong(value.trim());
      return Optional.of(seconds <= 0 ? Duration.ZERO
          : Duration.ofSeconds(Math.min(seconds, WatchStrategyOptions.MAX_TTL.getSeconds())));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  /**
   * Changes the watch budget of the stores open and to come: a lower one demotes the least recently used watches
   * beyond it, a higher one or none moves polled objects back to watches.
   */
  public void maxWatches(int maxWatches) {
    budget.resize(maxWatches).forEach(Runnable::run);
    fillBudgets();
  }

  /**
   * Moves polled objects to the free slots now, and again once the slots of watches just closed are free too: on the
   * timer, or with manual ticks at the first {@link #tick()} after the grace by the clock.
   */
  private void fillBudgets() {
    openStores.forEach(WatchObjectStore::fillBudget);
    if (settings.sweepInterval().isZero()) {
      refillAt = clock.millis() + WatchBudget.CLOSE_GRACE_MILLIS;
      return;
    }
    try {
      timer.schedule(() -> openStores.forEach(WatchObjectStore::fillBudget), WatchBudget.CLOSE_GRACE_MILLIS,
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // the strategy is closed
    }
  }

  /** @return the watch budget in force; 0 for none */
  public int maxWatches() {
    return budget.max();
  }

  /** The store tells {@code listener} every add, update and delete its watches see, on their event threads. */
  @Override
  public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type,
      ObjectStore.Listener<? super T> listener) {
    if (timer.isShutdown()) {
      throw new IllegalStateException("the watch strategy is closed");
    }
    DiskStore<T> disk = persistence == null ? DiskStore.none() : persistence.store(type);
    WatchObjectStore<T> store = new WatchObjectStore<>(client, reflectors, type, clock, settings, timer,
        listener, disk, restoredGrace, metrics);
    openStores.add(store);
    store.onClose(() -> {
      openStores.remove(store);
      // the slots it held go to the polled objects of the stores that replace it
      fillBudgets();
      if (retiring && openStores.isEmpty()) {
        close();
      }
    });
    return store;
  }

  /** @return the number of stores this strategy created that are not closed yet; for tests */
  int openStores() {
    return openStores.size();
  }

  /** @return true once {@link #close()} ran, directly or through {@link #closeWhenUnused()}; for tests */
  boolean isClosed() {
    return closed.get();
  }

  /**
   * Looks for idle watches in every open store and stops them, takes the clock's time for the access times that
   * follow, and opens the watches of polled objects whose slot was waiting for a closed watch's grace to pass: what
   * the timer does, unless the options ask for manual ticks.
   */
  public void tick() {
    openStores.forEach(WatchObjectStore::sweep);
    long at = refillAt;
    if (at >= 0 && clock.millis() - at >= 0) {
      refillAt = -1;
      openStores.forEach(WatchObjectStore::fillBudget);
    }
  }

  /**
   * Closes the strategy once its last open store closes (at once if none is open), so that the stores in use keep
   * working until their owner has moved to another strategy. Idempotent.
   */
  void closeWhenUnused() {
    retiring = true;
    if (openStores.isEmpty()) {
      close();
    }
  }

  /** Closes every store this strategy created and still open, its timer and the engine it built. Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    timer.shutdownNow();
    openStores.forEach(ObjectStore::close);
    if (ownEngine != null) {
      ownEngine.close();
    }
  }
}
