package dev.nodelet.managers.internal;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.objectcache.ConfigMapManager;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.PodListener;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.Designate;

/** The manager of the ConfigMaps this node's pods reference. */
@Component(service = {ConfigMapManager.class, PodListener.class, ObjectManager.class},
    configurationPid = ConfigMapManagerComponent.PID,
    property = {ObjectManager.RESOURCE_PROPERTY + "=configmaps",
        ObjectManager.PID_PROPERTY + "=" + ConfigMapManagerComponent.PID})
@Designate(ocd = ManagerConfiguration.class)
public final class ConfigMapManagerComponent extends ManagerComponent<ConfigMap> implements ConfigMapManager {

  public static final String PID = "dev.nodelet.configmap";

  @Activate
  public ConfigMapManagerComponent(@Reference KubernetesClient client, @Reference ManagerMetricsService metrics,
      ManagerConfiguration config, Map<String, Object> properties) {
    super(ObjectManagers.configMaps(client).metrics(metrics.metrics()).build(), PID, config, properties);
  }

  /** For tests: without the component's properties, so without the check of the configuration's keys. */
  ConfigMapManagerComponent(KubernetesClient client, ManagerMetricsService metrics, ManagerConfiguration config) {
    this(client, metrics, config, Map.of());
  }

  @Override
  public ConfigMap getConfigMap(String namespace, String name) {
    return get(namespace, name);
  }
}
