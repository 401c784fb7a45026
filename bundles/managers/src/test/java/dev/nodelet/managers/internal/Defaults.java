package dev.nodelet.managers.internal;

import dev.nodelet.objectcache.StoreStrategy;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import org.osgi.util.converter.Converters;

/** What the manager component tests pass where Declarative Services would: configuration and service properties. */
final class Defaults {

  private Defaults() {
  }

  /** The configuration with every default, as DS gives it without a configuration. */
  static ManagerConfiguration configuration() {
    return Converters.standardConverter().convert(Map.of()).to(ManagerConfiguration.class);
  }

  /** The service properties of strategy {@code name} registered as service {@code id}. */
  static Map<String, Object> strategy(String name, long id) {
    return Map.of(StoreStrategy.PROPERTY, name, "service.id", id);
  }

  /** A ConfigMap manager with every default and {@code strategy} bound as strategy {@code name}, service 1. */
  static ConfigMapManagerComponent configMapManager(KubernetesClient client, ManagerMetricsService metrics,
      String name, StoreStrategy strategy) {
    ConfigMapManagerComponent manager = new ConfigMapManagerComponent(client, metrics, configuration());
    manager.addStrategy(strategy, strategy(name, 1));
    return manager;
  }
}
