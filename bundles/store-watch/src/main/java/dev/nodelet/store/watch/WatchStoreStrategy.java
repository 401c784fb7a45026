package dev.nodelet.store.watch;

import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.kube.watch.Reflectors;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.persistence.Persistence;
import dev.nodelet.store.watch.internal.WatchBudget;
import dev.nodelet.store.watch.internal.WatchSettings;
import dev.nodelet.store.watch.internal.WatchStrategyOptions;
import dev.nodelet.store.watch.internal.WatchStrategyRuntime;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

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
  public static final String TTL_ANNOTATION = WatchSettings.TTL_ANNOTATION;

  /**
   * The largest watch budget, {@value}.
   *
   * @since 1.3
   */
  public static final int MAX_WATCHES = WatchBudget.MAX;

  private final WatchStrategyRuntime runtime;

  private WatchStoreStrategy(WatchStrategyRuntime runtime) {
    this.runtime = runtime;
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
    runtime.maxWatches(maxWatches);
  }

  /**
   * @return the watch budget in force; 0 for none
   * @since 1.3
   */
  public int maxWatches() {
    return runtime.maxWatches();
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
    return runtime.createStore(type, listener);
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
    runtime.tick();
  }

  /** Closes every store this strategy created and still open, its timer and the engine it built. Idempotent. */
  @Override
  public void close() {
    runtime.close();
  }

  /** Options of a {@link WatchStoreStrategy}. */
  public static final class Builder {
    private final WatchStrategyOptions options;

    private Builder(KubernetesClient client) {
      this.options = new WatchStrategyOptions(client);
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
      options.reflectors(reflectors);
      return this;
    }

    /**
     * @param metrics where the stores of the strategy count what they do; a new, unregistered one by default
     * @return this builder
     * @since 1.2
     */
    public Builder metrics(WatchStoreMetrics metrics) {
      options.metrics(Objects.requireNonNull(metrics, "metrics").instruments());
      return this;
    }

    /**
     * @param clock the clock of access times and the idle sweep; the system UTC clock by default
     * @return this builder
     */
    public Builder clock(Clock clock) {
      options.clock(clock);
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
      options.resyncInterval(resyncInterval);
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
      options.syncWait(syncWait);
      return this;
    }

    /**
     * How often idle watches are looked for.
     *
     * @param sweepInterval a positive duration; 1 minute by default
     * @return this builder
     */
    public Builder sweepInterval(Duration sweepInterval) {
      options.sweepInterval(sweepInterval);
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
      options.manualTicks();
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
      options.persistence(persistence);
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
      options.restoredReferenceGrace(grace);
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
      options.maxWatches(maxWatches);
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
      options.polledTtl(ttl);
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
      options.nodeAnnotations(nodeAnnotations);
      return this;
    }

    /** @return the maximum idle time this builder yields: five resync intervals, at least one minute */
    public Duration maxIdleTime() {
      return options.maxIdleTime();
    }

    /** @return a new strategy with its own sweep timer; close it when done */
    public WatchStoreStrategy build() {
      return new WatchStoreStrategy(new WatchStrategyRuntime(options));
    }
  }
}
