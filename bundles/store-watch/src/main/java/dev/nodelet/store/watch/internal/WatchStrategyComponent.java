package dev.nodelet.store.watch.internal;

import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.store.watch.WatchStoreStrategy;
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
 * The {@code watch} strategy as a service. A configuration change or a new client re-activates it: managers then
 * move their references to the new instance, and deactivation stops every watch and the sweep timer.
 */
@Component(service = StoreStrategy.class, configurationPid = WatchStrategyComponent.PID,
    property = StoreStrategy.PROPERTY + "=watch")
@Designate(ocd = WatchStrategyConfiguration.class)
public final class WatchStrategyComponent implements StoreStrategy {

  public static final String PID = "dev.nodelet.store.watch";

  private static final Logger LOG = LoggerFactory.getLogger(WatchStrategyComponent.class);

  private final WatchStoreStrategy strategy;

  @Activate
  public WatchStrategyComponent(@Reference KubernetesClient client, WatchStrategyConfiguration config) {
    this.strategy = WatchStoreStrategy.builder(client)
        .resyncInterval(Duration.ofSeconds(config.resync_interval_seconds()))
        .syncWait(Duration.ofMillis(config.sync_wait_millis()))
        .build();
    LOG.info("Watch store strategy active: resync interval {} s, sync wait {} ms", config.resync_interval_seconds(),
        config.sync_wait_millis());
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
