package dev.nodelet.store.watch;

import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.kube.watch.Reflectors;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.persistence.DiskStore;
import dev.nodelet.persistence.Persistence;
import dev.nodelet.store.watch.internal.WatchBudget;
import dev.nodelet.store.watch.internal.WatchMetrics;
import dev.nodelet.store.watch.internal.WatchObjectStore;
import dev.nodelet.store.watch.internal.WatchSettings;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
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
 * The {@code watch} strategy: each referenced object has its own list+watch (field selector
 * {@code metadata.name=<name>}) that starts when the first pod references it, stops when no pod does, when it has not
 * been read for the maximum idle time or when the object turns out to be immutable, and restarts on the next get.
 *
 * <p>Each object's list and watch is a {@link dev.nodelet.kube.watch.Reflector} of {@code nodelet-kube}'s one
 * list/watch machinery, over the client it is given: a {@link ReflectorEngine} the strategy builds over that client,
 * or the {@link Reflectors} given to {@link Builder#reflectors} (in OSGi, {@code nodelet-kube}'s service, so that the
 * watches share its connections, restart bucket and request metrics). Threads do not grow with the number of
 * watches: the strategy's one timer (the idle sweep, and opening the watches that registrations ask for) and the
 * engine's few. {@link #close()} closes every store still open, the timer and the engine the strategy built; a given
 * {@link Reflectors} and the client stay open.
 *
 * <p>Given a {@link Persistence} directory ({@link Builder#persistence}), its stores keep the objects and references
 * on disk and start with those a previous run stored, so that a node restarted without its API server still serves
 * them; see {@code WatchObjectStore}. The directory stays the caller's to close.
 *
 * <p>With a watch budget ({@link Builder#maxWatches}), at most that many objects of all its stores hold a watch.
 * The others are polled: served by GETs with the {@code ttl} strategy's rules (fetched again once the copy is older
 * than the time-to-live, {@link Builder#polledTtl} or the node's {@value #TTL_ANNOTATION} annotation). An object
 * starts polled when the budget is spent; a polled object read again sooner than the least recently used watched
 * object was takes that one's watch. Immutable objects hold no watch once seen immutable. Without a budget, every
 * referenced object is watched.
 */
public final class WatchStoreStrategy implements StoreStrategy, AutoCloseable {

  /**
   * The node annotation whose whole seconds, when given a source of the node's annotations
   * ({@link Builder#nodeAnnotations}), replace the time-to-live of polled objects, as for the {@code ttl} strategy.
   *
   * @since 1.3
   */
  public static final String TTL_ANNOTATION = "node.alpha.kubernetes.io/ttl";

  /**
   * The largest watch budget, {@value}.
   *
   * @since 1.3
   */
  public static final int MAX_WATCHES = WatchBudget.MAX;

  /** The longest time-to-live of polled objects: a year, as for the {@code ttl} strategy. */
  private static final Duration MAX_TTL = Duration.ofDays(365);

  private final WatchBudget budget;
  /** The retry delays of the engine the strategy builds: 250 ms doubling to 2 s, with jitter. */
  private static final Duration RETRY_INITIAL = Duration.ofMillis(250);
  private static final Duration RETRY_MAX = Duration.ofSeconds(2);

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

  private WatchStoreStrategy(Builder builder) {
    this.client = builder.client;
    if (builder.reflectors != null) {
      this.ownEngine = null;
      this.reflectors = builder.reflectors;
    } else {
      // retries sooner than the service's default, so that a restarted server is seen quickly
      this.ownEngine = ReflectorEngine.builder(builder.client).backoff(RETRY_INITIAL, RETRY_MAX).build();
      this.reflectors = ownEngine;
    }
    this.clock = builder.clock;
    this.budget = new WatchBudget(builder.maxWatches, builder.clock::millis);
    this.settings = new WatchSettings(builder.maxIdleTime(), builder.syncWait, builder.sweepInterval, budget,
        polledTtl(builder.polledTtl, builder.nodeAnnotations));
    this.metrics = builder.metrics.instruments();
    this.persistence = builder.persistence;
    this.restoredGrace = builder.restoredGrace;
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
    return () -> annotation.apply(TTL_ANNOTATION).flatMap(WatchStoreStrategy::seconds).orElse(defaultTtl);
  }

  private static Optional<Duration> seconds(String value) {
    try {
      long seconds = Long.parseLong(value.trim());
      return Optional.of(seconds <= 0 ? Duration.ZERO : Duration.ofSeconds(Math.min(seconds, MAX_TTL.getSeconds())));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  /**
   * Changes the watch budget of the stores open and to come: a lower one ends the watches of the least recently
   * used objects beyond it (they are polled from then on); a higher one or none moves polled objects back to
   * watches, the most recently used first.
   *
   * @param maxWatches the most objects holding a watch at once; 0 for no budget
   * @throws IllegalArgumentException if it is negative or above {@link #MAX_WATCHES}
   * @since 1.3
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

  /**
   * @return the watch budget in force; 0 for none
   * @since 1.3
   */
  public int maxWatches() {
    return budget.max();
  }

  /**
   * Starts building a strategy.
   *
   * @param client the client to watch with (and to check an immutable object again); not closed by the strategy
   * @return a builder with the kubelet's defaults
   */
  public static Builder builder(KubernetesClient client) {
    return new Builder(client);
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

  /**
   * @return the number of stores this strategy created that are not closed yet
   * @since 1.1
   */
  public int openStores() {
    return openStores.size();
  }

  /**
   * @return true once {@link #close()} ran, directly or through {@link #closeWhenUnused()}
   * @since 1.1
   */
  public boolean isClosed() {
    return closed.get();
  }

  /**
   * Looks for idle watches in every open store and stops them, takes the clock's time for the access times that
   * follow, and opens the watches of polled objects whose slot was waiting for a closed watch's grace (a quarter of
   * a second by the clock) to pass: what the strategy's timer does, unless it was built with
   * {@link Builder#manualTicks()}, when only this does it.
   *
   * @since 1.1
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
   *
   * @since 1.1
   */
  public void closeWhenUnused() {
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

  /** Options of a {@link WatchStoreStrategy}. */
  public static final class Builder {
    private final KubernetesClient client;
    private Clock clock = Clock.systemUTC();
    private Duration resyncInterval = Duration.ofMinutes(1);
    private Duration syncWait = Duration.ofSeconds(1);
    private Duration sweepInterval = Duration.ofMinutes(1);
    private WatchStoreMetrics metrics = new WatchStoreMetrics();
    private Persistence persistence;
    private Duration restoredGrace = Duration.ofMinutes(1);
    private int maxWatches;
    private Duration polledTtl = WatchSettings.DEFAULT_POLLED_TTL;
    private Optional<Function<String, Optional<String>>> nodeAnnotations = Optional.empty();
    private Reflectors reflectors;

    private Builder(KubernetesClient client) {
      this.client = Objects.requireNonNull(client, "client");
    }

    /**
     * The objects' reflectors come from {@code reflectors} (which must speak to the same API server as the client)
     * instead of an engine the strategy builds over the client; the strategy does not close them.
     *
     * @param reflectors in OSGi, the {@code nodelet-kube} service
     * @return this builder
     * @since 1.3
     */
    public Builder reflectors(Reflectors reflectors) {
      this.reflectors = Objects.requireNonNull(reflectors, "reflectors");
      return this;
    }

    /**
     * @param metrics where the stores of the strategy count what they do; a new, unregistered one by default
     * @return this builder
     * @since 1.2
     */
    public Builder metrics(WatchStoreMetrics metrics) {
      this.metrics = Objects.requireNonNull(metrics, "metrics");
      return this;
    }

    /**
     * @param clock the clock of access times and the idle sweep; the system UTC clock by default
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * The interval at which consumers re-read their objects (the kubelet's volume resync). An object not read for
     * five of these, and at least one minute, stops being watched until it is read again.
     *
     * @param resyncInterval a positive duration; 1 minute by default
     * @return this builder
     */
    public Builder resyncInterval(Duration resyncInterval) {
      this.resyncInterval = positive("resyncInterval", resyncInterval);
      return this;
    }

    /**
     * How long a get waits for an object's watch to deliver its first list before failing with
     * {@code failed to sync <resource> cache}.
     *
     * @param syncWait a positive duration; 1 second by default
     * @return this builder
     */
    public Builder syncWait(Duration syncWait) {
      this.syncWait = positive("syncWait", syncWait);
      return this;
    }

    /**
     * How often idle watches are looked for.
     *
     * @param sweepInterval a positive duration; 1 minute by default
     * @return this builder
     */
    public Builder sweepInterval(Duration sweepInterval) {
      this.sweepInterval = positive("sweepInterval", sweepInterval);
      return this;
    }

    /**
     * The strategy's timer does not look for idle watches or read the clock for access times:
     * {@link WatchStoreStrategy#tick()} does, when the owner calls it. For tests that drive time with their own
     * clock. Replaces {@link #sweepInterval}.
     *
     * @return this builder
     * @since 1.1
     */
    public Builder manualTicks() {
      this.sweepInterval = Duration.ZERO;
      return this;
    }

    /**
     * Keeps the objects and references on disk, and starts each store with what a previous run stored there.
     *
     * @param persistence an open persistence directory, closed by the caller after the strategy
     * @return this builder
     * @since 1.2
     */
    public Builder persistence(Persistence persistence) {
      this.persistence = Objects.requireNonNull(persistence, "persistence");
      return this;
    }

    /**
     * How long after the API server's first answer a pod whose references were read back from disk may take to
     * register again; then its references are dropped, with the objects only it referenced.
     *
     * @param grace a positive duration; 1 minute by default
     * @return this builder
     * @since 1.2
     */
    public Builder restoredReferenceGrace(Duration grace) {
      this.restoredGrace = positive("restoredReferenceGrace", grace);
      return this;
    }

    /**
     * A watch budget: at most this many objects of the strategy's stores hold a watch at once; the others are
     * served by GETs with a time-to-live (see the class comment).
     *
     * @param maxWatches 1 to {@link #MAX_WATCHES}, or 0 for no budget (the default: every object is watched)
     * @return this builder
     * @since 1.3
     */
    public Builder maxWatches(int maxWatches) {
      if (maxWatches < 0 || maxWatches > MAX_WATCHES) {
        throw new IllegalArgumentException("maxWatches must be between 0 (no budget) and " + MAX_WATCHES + ", was "
            + maxWatches);
      }
      this.maxWatches = maxWatches;
      return this;
    }

    /**
     * How long the copy of an object polled under the watch budget is served before a get fetches it again, unless
     * the node's annotation says otherwise ({@link #nodeAnnotations}).
     *
     * @param ttl zero (fetch on every get) to a year; 1 minute by default
     * @return this builder
     * @since 1.3
     */
    public Builder polledTtl(Duration ttl) {
      Objects.requireNonNull(ttl, "polledTtl");
      if (ttl.isNegative() || ttl.compareTo(MAX_TTL) > 0) {
        throw new IllegalArgumentException("polledTtl must be between 0 and " + MAX_TTL + ", was " + ttl);
      }
      this.polledTtl = ttl;
      return this;
    }

    /**
     * The node's {@value #TTL_ANNOTATION} annotation, read from this source on every get of a polled object whose
     * copy may be stale, replaces {@link #polledTtl} when it parses.
     *
     * @param nodeAnnotations the node's annotation of a key, as last seen; must not block (in OSGi,
     *     {@code NodeIdentity::nodeAnnotation})
     * @return this builder
     * @since 1.3
     */
    public Builder nodeAnnotations(Function<String, Optional<String>> nodeAnnotations) {
      this.nodeAnnotations = Optional.of(Objects.requireNonNull(nodeAnnotations, "nodeAnnotations"));
      return this;
    }

    /** @return the maximum idle time this builder yields: five resync intervals, at least one minute */
    public Duration maxIdleTime() {
      Duration fiveResyncs = resyncInterval.multipliedBy(5);
      return fiveResyncs.compareTo(Duration.ofMinutes(1)) < 0 ? Duration.ofMinutes(1) : fiveResyncs;
    }

    /** @return a new strategy with its own sweep timer; close it when done */
    public WatchStoreStrategy build() {
      return new WatchStoreStrategy(this);
    }

    private static Duration positive(String option, Duration value) {
      Objects.requireNonNull(value, option);
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException(option + " must be positive, was " + value);
      }
      return value;
    }
  }
}
