package dev.nodelet.configmap.internal;

import dev.nodelet.objectcache.ConfigMapManager;
import dev.nodelet.objectcache.ManagerService;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.PodListener;
import dev.nodelet.objectcache.StoreStrategy;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ConfigMap manager as a service. The strategy reference is dynamic, so a new {@code strategy.target} or a
 * strategy bundle coming and going moves the registrations to another store without re-activating; only a new
 * {@link KubernetesClient} re-activates it (the pod source then registers the pods again).
 */
@Component(service = {ConfigMapManager.class, PodListener.class, ObjectManager.class},
    configurationPid = ConfigMapManagerComponent.PID,
    property = {ObjectManager.RESOURCE_PROPERTY + "=configmaps",
        ObjectManager.PID_PROPERTY + "=" + ConfigMapManagerComponent.PID})
@Designate(ocd = ConfigMapManagerConfiguration.class)
public final class ConfigMapManagerComponent extends ManagerService<ConfigMap> implements ConfigMapManager {

  public static final String PID = "dev.nodelet.configmap";

  static final String DEFAULT_STRATEGY = "(" + StoreStrategy.PROPERTY + "=watch)";

  private static final Logger LOG = LoggerFactory.getLogger(ConfigMapManagerComponent.class);

  @Activate
  public ConfigMapManagerComponent(@Reference KubernetesClient client, ConfigMapManagerConfiguration config) {
    super(ObjectManager.configMaps(client).build());
    LOG.info("ConfigMap manager active: strategy {}", config.strategy_target());
    StrategyTarget.check(PID, config.strategy_target());
  }

  /**
   * SCR re-binds the strategy reference itself when {@code strategy.target} changes, without re-activating: no
   * registration is lost, whatever the new value.
   */
  @Modified
  void modified(ConfigMapManagerConfiguration config) {
    LOG.info("ConfigMap manager reconfigured: strategy {}", config.strategy_target());
    StrategyTarget.check(PID, config.strategy_target());
  }

  @Reference(name = "strategy", service = StoreStrategy.class, cardinality = ReferenceCardinality.MULTIPLE,
      policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY, target = DEFAULT_STRATEGY,
      updated = "updatedStrategy")
  void addStrategy(StoreStrategy strategy, Map<String, Object> properties) {
    bindStrategy(strategy, properties);
  }

  /** A strategy took a new configuration: its stores built before are replaced by fresh ones. */
  void updatedStrategy(StoreStrategy strategy, Map<String, Object> properties) {
    updateStrategy(strategy, properties);
  }

  void removeStrategy(StoreStrategy strategy, Map<String, Object> properties) {
    unbindStrategy(strategy, properties);
  }

  @Deactivate
  void deactivate() {
    close();
  }

  @Override
  public ConfigMap getConfigMap(String namespace, String name) {
    return get(namespace, name);
  }
}
