package dev.nodelet.store.ttl.internal;

import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.configuration.Running;
import dev.nodelet.configuration.ServicePublisher;
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
import java.util.Map;
import org.osgi.annotation.bundle.Capability;
import org.osgi.framework.BundleContext;
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
 * With an invalid first configuration it registers no strategy (the managers serve with their built-in {@code get})
 * and holds readiness until a valid one comes.
 */
// the strategy service is registered from code, once a valid configuration is in force: declared for resolvers
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=\"dev.nodelet.objectcache.StoreStrategy\"")
@Component(service = MultiCollector.class, immediate = true, configurationPid = TtlStrategyComponent.PID)
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
  private final Running<TtlStoreStrategy> strategy = new Running<>();

  @Activate
  public TtlStrategyComponent(BundleContext context, @Reference KubernetesClient client,
      @Reference NodeIdentity node, TtlStrategyConfiguration config, Map<String, Object> properties) {
    this(ServicePublisher.of(context), client, node, config, properties);
  }

  /** For tests: where the strategy service and the health check of a waiting strategy go. */
  TtlStrategyComponent(ServicePublisher publisher, KubernetesClient client, NodeIdentity node,
      TtlStrategyConfiguration config, Map<String, Object> properties) {
    this.client = client;
    this.node = node;
    this.persistence = new PersistenceSwitch(node.nodeName());
    this.configuration = LastGoodConfiguration.waiting(PID, "the TTL store strategy", TtlSettings::from, publisher)
        .publishing(this, Map.of(StoreStrategy.PROPERTY, "ttl"), StoreStrategy.class)
        .closing(strategy, persistence);
    modified(config, properties);
  }

  /** Applies a valid configuration, refuses an invalid one; never throws for an invalid one. */
  @Modified
  void modified(TtlStrategyConfiguration config, Map<String, Object> properties) {
    configuration.apply(config, properties, next -> {
      strategy.replace(build(next));
      LOG.info("TTL store strategy active: {}", describe(next));
    });
  }

  /** Withdraws the services, then closes what runs. */
  @Deactivate
  void deactivate() {
    configuration.close();
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
    return strategy.get().orElseThrow(
        () -> new IllegalStateException("the TTL store strategy waits for a valid configuration " + PID))
        .createStore(type, listener);
  }

  @Override
  public MetricSnapshots collect() {
    return metrics.collect();
  }
}
