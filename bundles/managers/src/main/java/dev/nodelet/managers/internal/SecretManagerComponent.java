package dev.nodelet.managers.internal;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.PodListener;
import dev.nodelet.objectcache.SecretManager;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.Designate;

/** The manager of the Secrets this node's pods reference. */
@Component(service = {SecretManager.class, PodListener.class, ObjectManager.class},
    configurationPid = SecretManagerComponent.PID,
    property = {ObjectManager.RESOURCE_PROPERTY + "=secrets",
        ObjectManager.PID_PROPERTY + "=" + SecretManagerComponent.PID})
@Designate(ocd = ManagerConfiguration.class)
public final class SecretManagerComponent extends ManagerComponent<Secret> implements SecretManager {

  public static final String PID = "dev.nodelet.secret";

  @Activate
  public SecretManagerComponent(@Reference KubernetesClient client, @Reference ManagerMetricsService metrics,
      ManagerConfiguration config, Map<String, Object> properties) {
    super(ObjectManagers.secrets(client).metrics(metrics.metrics()).build(), PID, config, properties);
  }

  /** For tests: without the component's properties, so without the check of the configuration's keys. */
  SecretManagerComponent(KubernetesClient client, ManagerMetricsService metrics, ManagerConfiguration config) {
    this(client, metrics, config, Map.of());
  }

  @Override
  public Secret getSecret(String namespace, String name) {
    return get(namespace, name);
  }
}
