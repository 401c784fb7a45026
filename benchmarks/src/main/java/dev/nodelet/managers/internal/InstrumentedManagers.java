package dev.nodelet.managers.internal;

import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.StoreStrategy;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.lang.annotation.Annotation;
import java.util.Map;

/**
 * The ConfigMap manager component as the OSGi runtime builds it, with its metrics, bound to one strategy: in this
 * package because binding a strategy is the component's package-private business (SCR calls it).
 */
public final class InstrumentedManagers {

  private InstrumentedManagers() {
  }

  /**
   * @return a manager component that records into {@code metrics} and keeps its objects in {@code strategy}; close
   *     it with {@link #close}
   */
  public static ObjectManager<ConfigMap> configMaps(KubernetesClient client, ManagerMetrics metrics,
      StoreStrategy strategy, String strategyName) {
    ConfigMapManagerComponent component = new ConfigMapManagerComponent(client, metrics, new ManagerConfiguration() {
      @Override
      public String strategy_target() {
        return "(" + StoreStrategy.PROPERTY + "=" + strategyName + ")";
      }

      @Override
      public Class<? extends Annotation> annotationType() {
        return ManagerConfiguration.class;
      }
    });
    component.addStrategy(strategy, Map.of(StoreStrategy.PROPERTY, strategyName, "service.id", 1L));
    return component;
  }

  /** Deactivates a component built by {@link #configMaps}. */
  public static void close(ObjectManager<ConfigMap> component) {
    ((ConfigMapManagerComponent) component).deactivate();
  }
}
