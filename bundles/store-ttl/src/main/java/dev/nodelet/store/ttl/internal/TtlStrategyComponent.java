package dev.nodelet.store.ttl.internal;

import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.store.ttl.TtlStoreStrategy;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code ttl} strategy as a service. A new configuration does not re-activate it: a valid one builds a new
 * strategy for the stores created from then on (the Nodelet managers take fresh stores when the service's properties
 * change; the strategy before closes with its last store), an invalid one is refused with an error naming the key
 * and the last good configuration stays in force. An invalid configuration at activation fails the activation. A
 * new client or node identity re-activates it. It keeps no watch: the node's annotation comes from the
 * {@link NodeIdentity} service, which watches the node anyway (a watch of its own, stopped within milliseconds of its
 * start, can leave its connection open in the shared client).
 */
@Component(service = StoreStrategy.class, configurationPid = TtlStrategyComponent.PID,
    property = StoreStrategy.PROPERTY + "=ttl")
@Designate(ocd = TtlStrategyConfiguration.class)
public final class TtlStrategyComponent implements StoreStrategy {

  public static final String PID = "dev.nodelet.store.ttl";

  private static final Logger LOG = LoggerFactory.getLogger(TtlStrategyComponent.class);

  private final KubernetesClient client;
  private final NodeIdentity node;
  private final StrategyGenerations<TtlStoreStrategy> strategies;
  private volatile TtlSettings settings;

  /**
   * @throws IllegalArgumentException if the configuration is invalid, naming the key
   */
  @Activate
  public TtlStrategyComponent(@Reference KubernetesClient client, @Reference NodeIdentity node,
      TtlStrategyConfiguration config) {
    this.client = client;
    this.node = node;
    try {
      this.settings = TtlSettings.from(config);
    } catch (IllegalArgumentException e) {
      LOG.error("Configuration {} is invalid, the TTL store strategy does not start: {}", PID, e.getMessage());
      throw e;
    }
    this.strategies = new StrategyGenerations<>(build(settings));
    LOG.info("TTL store strategy active: {}", describe(settings));
  }

  /** Applies a valid configuration, refuses an invalid one; never throws. */
  @Modified
  void modified(TtlStrategyConfiguration config) {
    TtlSettings next;
    try {
      next = TtlSettings.from(config);
    } catch (IllegalArgumentException e) {
      LOG.error("Configuration {} refused, the TTL store strategy keeps its last good configuration ({}): {}", PID,
          settings, e.getMessage());
      return;
    }
    if (next.equals(settings)) {
      return;
    }
    strategies.replace(build(next));
    settings = next;
    LOG.info("TTL store strategy reconfigured: {}", describe(next));
  }

  private TtlStoreStrategy build(TtlSettings s) {
    TtlStoreStrategy.Builder builder = TtlStoreStrategy.builder(client)
        .defaultTtl(Duration.ofSeconds(s.defaultTtlSeconds()));
    if (s.useNodeAnnotation()) {
      builder.nodeName(node.nodeName()).nodeAnnotations(node::nodeAnnotation);
    }
    return builder.build();
  }

  private String describe(TtlSettings s) {
    return "default TTL " + s.defaultTtlSeconds() + " s, node annotation "
        + (s.useNodeAnnotation() ? "of " + node.nodeName() : "ignored");
  }

  /** The configuration in force. */
  TtlSettings settings() {
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
}
