package dev.nodelet.store.ttl.internal;

import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.persistence.PersistenceSwitch;
import dev.nodelet.store.ttl.TtlStoreMetrics;
import dev.nodelet.store.ttl.TtlStoreStrategy;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
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
 * The {@code ttl} strategy as a service. Its configuration goes through {@link LastGoodConfiguration}: a valid new
 * one builds a new strategy for the stores created from then on (the managers take fresh stores when the service's
 * properties change), an invalid one is refused with an error naming the key. A new client or node identity
 * re-activates it. It keeps no watch: the node's annotation comes from the {@link NodeIdentity} service, which
 * watches the node anyway (a watch of its own, stopped within milliseconds of its start, can leave its connection
 * open in the shared client). So a strategy it replaces holds nothing and closes at once, while its stores keep
 * serving until the managers have moved. With {@code persistence.dir} set, its stores keep what they fetch on disk;
 * the directory stays open across changes that keep the {@code persistence.*} keys and is reopened when they change.
 */
@Component(service = {StoreStrategy.class, MultiCollector.class}, configurationPid = TtlStrategyComponent.PID,
    property = StoreStrategy.PROPERTY + "=ttl")
@Designate(ocd = TtlStrategyConfiguration.class)
public final class TtlStrategyComponent implements StoreStrategy, MultiCollector {

  public static final String PID = "dev.nodelet.store.ttl";

  private static final Logger LOG = LoggerFactory.getLogger(TtlStrategyComponent.class);

  private final KubernetesClient client;
  private final NodeIdentity node;
  private final LastGoodConfiguration<TtlStrategyConfiguration, TtlSettings> configuration;
  /** Shared by the strategies built one after another, so that the counts go on. */
  private final TtlStoreMetrics metrics = new TtlStoreMetrics();
  private final PersistenceSwitch persistence;
  private volatile TtlStoreStrategy strategy;

  /**
   * @throws IllegalArgumentException if the configuration is invalid, naming the key
   */
  @Activate
  public TtlStrategyComponent(@Reference KubernetesClient client, @Reference NodeIdentity node,
      TtlStrategyConfiguration config) {
    this.client = client;
    this.node = node;
    this.configuration = LastGoodConfiguration.activate(PID, "the TTL store strategy", config, TtlSettings::from);
    this.persistence = new PersistenceSwitch(node.nodeName());
    this.strategy = build(configuration.current());
    LOG.info("TTL store strategy active: {}", describe(configuration.current()));
  }

  /** Applies a valid configuration, refuses an invalid one; never throws. */
  @Modified
  void modified(TtlStrategyConfiguration config) {
    configuration.offer(config).ifPresent(next -> {
      TtlStoreStrategy old = strategy;
      strategy = build(next);
      old.close();
    });
  }

  private TtlStoreStrategy build(TtlSettings s) {
    TtlStoreStrategy.Builder builder = TtlStoreStrategy.builder(client)
        .defaultTtl(Duration.ofSeconds(s.defaultTtlSeconds())).metrics(metrics);
    if (s.useNodeAnnotation()) {
      builder.nodeName(node.nodeName()).nodeAnnotations(node::nodeAnnotation);
    }
    persistence.use(s.persistence()).ifPresent(open -> builder.persistence(open)
        .restoredReferenceGrace(s.persistence().orElseThrow().restoredGrace()));
    return builder.build();
  }

  private String describe(TtlSettings s) {
    return "default TTL " + s.defaultTtlSeconds() + " s, node annotation "
        + (s.useNodeAnnotation() ? "of " + node.nodeName() : "ignored")
        + s.persistence().map(p -> ", " + p).orElse("");
  }

  /** The configuration in force. */
  TtlSettings settings() {
    return configuration.current();
  }

  @Override
  public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type,
      ObjectStore.Listener<? super T> listener) {
    return strategy.createStore(type, listener);
  }

  @Override
  public MetricSnapshots collect() {
    return metrics.collect();
  }

  @Deactivate
  void deactivate() {
    strategy.close();
    persistence.close();
  }
}
