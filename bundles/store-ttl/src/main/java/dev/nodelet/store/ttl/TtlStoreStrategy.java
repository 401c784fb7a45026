package dev.nodelet.store.ttl;

import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.persistence.DiskStore;
import dev.nodelet.persistence.Persistence;
import dev.nodelet.store.ttl.internal.NodeTtl;
import dev.nodelet.store.ttl.internal.TtlCap;
import dev.nodelet.store.ttl.internal.TtlMetrics;
import dev.nodelet.store.ttl.internal.TtlObjectStore;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The {@code ttl} strategy: a get answers from the cached copy while it is fresh and fetches it from the API server
 * otherwise; registering a pod invalidates the copies it references. The time-to-live is the node's annotation
 * {@value #TTL_ANNOTATION} (whole seconds) when a node name is given and the annotation parses, else the default.
 *
 * <p>Given a node name only, it keeps one watch, on that {@code Node} object, for the annotation; {@link #close()}
 * ends it. Given a source of the node's annotations (in OSGi, the {@code NodeIdentity} service, which watches the
 * node anyway), it keeps none.
 *
 * <p>A time-to-live longer than {@link #MAX_TTL}, from the annotation or the default, is capped at it with a warning
 * naming the node and the value: far longer ones (about 3.2e16 seconds) overflow the clock arithmetic.
 *
 * <p>Given a {@link Persistence} directory ({@link Builder#persistence}), its stores keep what they fetch and the
 * references on disk and start with what a previous run stored: a stored copy is served, marked
 * {@link dev.nodelet.objectcache.ObjectState#FROM_DISK}, only while its fetch fails, and the first fetch that succeeds
 * replaces it. The directory stays the caller's to close.
 */
public final class TtlStoreStrategy implements StoreStrategy, AutoCloseable {

  /** The node annotation that overrides the default time-to-live, in whole seconds. */
  public static final String TTL_ANNOTATION = "node.alpha.kubernetes.io/ttl";

  /**
   * The longest time-to-live a strategy applies: a year.
   *
   * @since 1.2
   */
  public static final Duration MAX_TTL = Duration.ofDays(365);

  private final KubernetesClient client;
  private final Clock clock;
  private final Optional<NodeTtl> nodeTtl;
  private final Supplier<Duration> ttl;
  private final TtlMetrics metrics;
  private final Persistence persistence;
  private final Duration restoredGrace;

  private TtlStoreStrategy(Builder builder) {
    this.client = builder.client;
    this.metrics = builder.metrics.instruments();
    this.clock = builder.clock;
    this.persistence = builder.persistence;
    this.restoredGrace = builder.restoredGrace;
    Optional<Function<String, Optional<String>>> annotations = builder.nodeAnnotations;
    this.nodeTtl = annotations.isPresent() ? Optional.empty()
        : builder.nodeName.map(node -> NodeTtl.start(builder.client, node, TTL_ANNOTATION));
    Duration defaultTtl = TtlCap.capDefault(builder.defaultTtl);
    TtlCap cap = new TtlCap(builder.nodeName.orElse("(unnamed)"));
    if (nodeTtl.isPresent()) {
      NodeTtl node = nodeTtl.get();
      this.ttl = () -> node.ttl().map(cap::annotated).orElse(defaultTtl);
    } else if (annotations.isPresent()) {
      Function<String, Optional<String>> annotation = annotations.get();
      this.ttl = () -> annotation.apply(TTL_ANNOTATION).flatMap(NodeTtl::parse).map(cap::annotated)
          .orElse(defaultTtl);
    } else {
      this.ttl = () -> defaultTtl;
    }
  }

  /**
   * Starts building a strategy.
   *
   * @param client the client to fetch with; not closed by the strategy
   * @return a builder with the kubelet's defaults
   */
  public static Builder builder(KubernetesClient client) {
    return new Builder(client);
  }

  /** The store tells {@code listener} what each fetch finds, in the thread of the get that fetched. */
  @Override
  public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type,
      ObjectStore.Listener<? super T> listener) {
    DiskStore<T> disk = persistence == null ? DiskStore.none() : persistence.store(type);
    return new TtlObjectStore<>(client, type, clock, ttl, listener, metrics, disk, restoredGrace);
  }

  /** Stops the watch on the node. Stores keep working with the default time-to-live. Idempotent. */
  @Override
  public void close() {
    nodeTtl.ifPresent(NodeTtl::close);
  }

  /** Options of a {@link TtlStoreStrategy}. */
  public static final class Builder {
    private final KubernetesClient client;
    private Clock clock = Clock.systemUTC();
    private Duration defaultTtl = Duration.ofMinutes(1);
    private Optional<String> nodeName = Optional.empty();
    private Optional<Function<String, Optional<String>>> nodeAnnotations = Optional.empty();
    private TtlStoreMetrics metrics = new TtlStoreMetrics();
    private Persistence persistence;
    private Duration restoredGrace = Duration.ofMinutes(1);

    private Builder(KubernetesClient client) {
      this.client = Objects.requireNonNull(client, "client");
    }

    /**
     * @param metrics where the stores of the strategy count their fetches; a new, unregistered one by default
     * @return this builder
     * @since 1.3
     */
    public Builder metrics(TtlStoreMetrics metrics) {
      this.metrics = Objects.requireNonNull(metrics, "metrics");
      return this;
    }

    /**
     * @param clock the clock that ages cached copies; the system UTC clock by default
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * @param defaultTtl how long a fetched copy stays fresh when the node does not say; zero fetches on every get;
     *     1 minute by default; capped at {@link #MAX_TTL} with a warning
     * @return this builder
     */
    public Builder defaultTtl(Duration defaultTtl) {
      Objects.requireNonNull(defaultTtl, "defaultTtl");
      if (defaultTtl.isNegative()) {
        throw new IllegalArgumentException("defaultTtl must not be negative, was " + defaultTtl);
      }
      this.defaultTtl = defaultTtl;
      return this;
    }

    /**
     * The node whose {@value #TTL_ANNOTATION} annotation sets the time-to-live. Without
     * {@link #nodeAnnotations}, the strategy watches this node for it; with them, the name only labels warnings.
     *
     * @param nodeName the node; none by default
     * @return this builder
     */
    public Builder nodeName(String nodeName) {
      this.nodeName = Optional.of(Objects.requireNonNull(nodeName, "nodeName"));
      return this;
    }

    /**
     * The strategy reads the node's {@value #TTL_ANNOTATION} annotation from this source on every get that needs the
     * time-to-live, and keeps no watch of its own, even if a {@link #nodeName} is given.
     *
     * @param nodeAnnotations the node's annotation of a key, as last seen; must not block (in OSGi,
     *     {@code NodeIdentity::nodeAnnotation})
     * @return this builder
     * @since 1.1
     */
    public Builder nodeAnnotations(Function<String, Optional<String>> nodeAnnotations) {
      this.nodeAnnotations = Optional.of(Objects.requireNonNull(nodeAnnotations, "nodeAnnotations"));
      return this;
    }

    /**
     * Keeps what the stores fetch and their references on disk, and starts each store with what a previous run
     * stored there.
     *
     * @param persistence an open persistence directory, closed by the caller after the strategy
     * @return this builder
     * @since 1.4
     */
    public Builder persistence(Persistence persistence) {
      this.persistence = Objects.requireNonNull(persistence, "persistence");
      return this;
    }

    /**
     * How long after the first successful fetch a pod whose references were read back from disk may take to register
     * again; then its references are dropped, with the objects only it referenced.
     *
     * @param grace a positive duration; 1 minute by default
     * @return this builder
     * @since 1.4
     */
    public Builder restoredReferenceGrace(Duration grace) {
      Objects.requireNonNull(grace, "restoredReferenceGrace");
      if (grace.isNegative() || grace.isZero()) {
        throw new IllegalArgumentException("restoredReferenceGrace must be positive, was " + grace);
      }
      this.restoredGrace = grace;
      return this;
    }

    /** @return a new strategy; close it when done */
    public TtlStoreStrategy build() {
      return new TtlStoreStrategy(this);
    }
  }
}
