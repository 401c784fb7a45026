package dev.nodelet.store.get.internal;

import dev.nodelet.cache.core.GetStrategy;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The {@code get} strategy as a service. It owns nothing (no watch, no timer), so it needs no deactivation; the
 * implementation lives in the API bundle because managers fall back to it while no strategy service is available.
 */
@Component(service = StoreStrategy.class, property = StoreStrategy.PROPERTY + "=get")
public final class GetStrategyComponent implements StoreStrategy {

  private final GetStrategy strategy;

  @Activate
  public GetStrategyComponent(@Reference KubernetesClient client) {
    this.strategy = new GetStrategy(client);
  }

  @Override
  public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type,
      ObjectStore.Listener<? super T> listener) {
    return strategy.createStore(type, listener);
  }
}
