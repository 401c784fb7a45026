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
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code ttl} strategy as a service. A configuration change or a new client re-activates it; deactivation ends
 * the watch on the node.
 */
@Component(service = StoreStrategy.class, configurationPid = TtlStrategyComponent.PID,
    property = StoreStrategy.PROPERTY + "=ttl")
@Designate(ocd = TtlStrategyConfiguration.class)
public final class TtlStrategyComponent implements StoreStrategy {

  public static final String PID = "dev.nodelet.store.ttl";

  private static final Logger LOG = LoggerFactory.getLogger(TtlStrategyComponent.class);

  private final TtlStoreStrategy strategy;

  @Activate
  public TtlStrategyComponent(@Reference KubernetesClient client, @Reference NodeIdentity node,
      TtlStrategyConfiguration config) {
    TtlStoreStrategy.Builder builder = TtlStoreStrategy.builder(client)
        .defaultTtl(Duration.ofSeconds(config.default_ttl_seconds()));
    if (config.use_node_ttl_annotation()) {
      builder.nodeName(node.nodeName());
    }
    this.strategy = builder.build();
    LOG.info("TTL store strategy active: default TTL {} s, node annotation {}", config.default_ttl_seconds(),
        config.use_node_ttl_annotation() ? "of " + node.nodeName() : "ignored");
  }

  @Override
  public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type) {
    return strategy.createStore(type);
  }

  @Override
  public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type,
      ObjectStore.Listener<? super T> listener) {
    return strategy.createStore(type, listener);
  }

  @Deactivate
  void deactivate() {
    strategy.close();
  }
}
