package dev.nodelet.benchmarks;

import dev.nodelet.cache.core.ManagerMetrics;
import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.store.watch.WatchStoreMetrics;
import dev.nodelet.store.watch.WatchStoreStrategy;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * What the cached-get measures read: a ConfigMap manager on the watch strategy over an embedded API server, with
 * {@code count} ConfigMaps, each referenced by a pod and synced. Closing it closes the manager, the strategy, the
 * client and the server.
 */
final class SyncedManager implements AutoCloseable {

  final EmbeddedApiServer server;
  final KubernetesClient client;
  final WatchStoreStrategy strategy;
  final SwitchableObjectManager<ConfigMap> manager;
  /** The ConfigMaps' names, in the order they were made. */
  final String[] names;

  /**
   * @param metrics whether the manager and its strategy report metrics, as the OSGi components build them
   */
  SyncedManager(int count, boolean metrics) {
    server = EmbeddedApiServer.builder().build().start();
    client = Watched.nodeletClient(server.url());
    Fixtures.createConfigMaps(client, 0, count);
    WatchStoreStrategy.Builder strategyBuilder = WatchStoreStrategy.builder(client);
    ObjectManagers.Builder<ConfigMap> managerBuilder = ObjectManagers.configMaps(client);
    if (metrics) {
      strategyBuilder.metrics(new WatchStoreMetrics());
      managerBuilder.metrics(new ManagerMetrics());
    }
    strategy = strategyBuilder.build();
    manager = managerBuilder.build();
    manager.useStrategy("watch", strategy);
    Fixtures.podsReferencing(0, count).forEach(manager::registerPod);
    names = new String[count];
    for (int i = 0; i < count; i++) {
      names[i] = Fixtures.name(i);
      Fixtures.getSynced(manager, names[i]);
    }
  }

  @Override
  public void close() {
    manager.close();
    strategy.close();
    client.close();
    server.close();
  }
}
