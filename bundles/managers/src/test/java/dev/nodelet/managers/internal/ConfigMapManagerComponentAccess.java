package dev.nodelet.managers.internal;

import dev.nodelet.objectcache.StoreStrategy;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import org.osgi.util.converter.Converters;

/** The manager component with its DS callbacks, as SCR calls them, for tests in other packages. */
public final class ConfigMapManagerComponentAccess {

  private final ConfigMapManagerComponent component;

  public ConfigMapManagerComponentAccess(KubernetesClient client) {
    component = new ConfigMapManagerComponent(client, Converters.standardConverter().convert(Map.of())
        .to(ManagerConfiguration.class));
  }

  public void bind(StoreStrategy strategy, Map<String, Object> properties) {
    component.addStrategy(strategy, properties);
  }

  public void update(StoreStrategy strategy, Map<String, Object> properties) {
    component.updatedStrategy(strategy, properties);
  }

  public void registerPod(Pod pod) {
    component.registerPod(pod);
  }

  public ConfigMap get(String namespace, String name) {
    return component.getConfigMap(namespace, name);
  }

  public void close() {
    component.deactivate();
  }
}
