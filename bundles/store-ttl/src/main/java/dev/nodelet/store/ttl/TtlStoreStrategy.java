package dev.nodelet.store.ttl;

import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.store.ttl.internal.NodeTtl;
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
 * <p>Given a node name, it keeps one watch, on that {@code Node} object, for the annotation; {@link #close()} ends
 * it. Given a source of the node's annotations instead (in OSGi, the {@code NodeIdentity} service, which watches the
 * node anyway), it keeps none.
 */
public final class TtlStoreStrategy implements StoreStrategy, AutoCloseable {

  /** The node annotation that overrides the default time-to-live, in whole seconds. */
  public static final String TTL_ANNOTATION = "node.alpha.kubernetes.io/ttl";

  private final KubernetesClient client;
  private final Clock clock;
  private final Optional<NodeTtl> nodeTtl;
  private final Supplier<Duration> ttl;

  private TtlStoreStrategy(Builder builder) {
    this.client = builder.client;
    this.clock = builder.clock;
    this.nodeTtl = builder.nodeName.map(node -> NodeTtl.start(builder.client, node, TTL_ANNOTATION));
    Duration defaultTtl = builder.defaultTtl;
    Optional<Function<String, Optional<String>>> annotations = builder.nodeAnnotations;
    if (nodeTtl.isPresent()) {
      NodeTtl node = nodeTtl.get();
      this.ttl = () -> node.ttl().orElse(defaultTtl);
    } else if (annotations.isPresent()) {
      Function<String, Optional<String>> annotation = annotations.get();
      this.ttl = () -> annotation.apply(TTL_ANNOTATION).flatMap(NodeTtl::parse).orElse(defaultTtl);
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

  @Override
  public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type) {
    return createStore(type, ObjectStore.Listener.none());
  }

  /** The store tells {@code listener} what each fetch finds, in the thread of the get that fetched. */
  @Override
  public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type,
      ObjectStore.Listener<? super T> listener) {
    return new TtlObjectStore<>(client, type, clock, ttl, listener);
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

    private Builder(KubernetesClient client) {
      this.client = Objects.requireNonNull(client, "client");
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
     *     1 minute by default
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
     * The strategy watches this node for its {@value #TTL_ANNOTATION} annotation. Replaces
     * {@link #nodeAnnotations}.
     *
     * @param nodeName the node whose {@value #TTL_ANNOTATION} annotation sets the time-to-live; none by default
     * @return this builder
     */
    public Builder nodeName(String nodeName) {
      this.nodeName = Optional.of(Objects.requireNonNull(nodeName, "nodeName"));
      this.nodeAnnotations = Optional.empty();
      return this;
    }

    /**
     * The strategy reads the node's {@value #TTL_ANNOTATION} annotation from this source on every get that needs the
     * time-to-live, and keeps no watch of its own. Replaces {@link #nodeName}.
     *
     * @param nodeAnnotations the node's annotation of a key, as last seen; must not block (in OSGi,
     *     {@code NodeIdentity::nodeAnnotation})
     * @return this builder
     * @since 1.1
     */
    public Builder nodeAnnotations(Function<String, Optional<String>> nodeAnnotations) {
      this.nodeAnnotations = Optional.of(Objects.requireNonNull(nodeAnnotations, "nodeAnnotations"));
      this.nodeName = Optional.empty();
      return this;
    }

    /** @return a new strategy; close it when done */
    public TtlStoreStrategy build() {
      return new TtlStoreStrategy(this);
    }
  }
}
