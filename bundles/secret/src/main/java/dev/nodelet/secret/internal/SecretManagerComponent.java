package dev.nodelet.secret.internal;

import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.SecretManager;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.PodListener;
import dev.nodelet.objectcache.RegisteredPod;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.objectcache.StrategyBindings;
import dev.nodelet.objectcache.SwitchableObjectManager;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchOptions;
import dev.nodelet.objectcache.WatchStatistics;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
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
 * The Secret manager as a service. The strategy reference is dynamic, so a new {@code strategy.target} or a
 * strategy bundle coming and going moves the registrations to another store without re-activating; only a new
 * {@link KubernetesClient} re-activates it (the pod source then registers the pods again).
 */
@Component(service = {SecretManager.class, PodListener.class, ObjectManager.class},
    configurationPid = SecretManagerComponent.PID,
    property = {ObjectManager.RESOURCE_PROPERTY + "=secrets",
        ObjectManager.PID_PROPERTY + "=" + SecretManagerComponent.PID})
@Designate(ocd = SecretManagerConfiguration.class)
public final class SecretManagerComponent implements SecretManager, ObjectManager<Secret> {

  public static final String PID = "dev.nodelet.secret";

  static final String DEFAULT_STRATEGY = "(" + StoreStrategy.PROPERTY + "=watch)";

  private static final Logger LOG = LoggerFactory.getLogger(SecretManagerComponent.class);

  private final SwitchableObjectManager<Secret> manager;
  private final StrategyBindings strategies;

  @Activate
  public SecretManagerComponent(@Reference KubernetesClient client, SecretManagerConfiguration config) {
    this.manager = ObjectManager.secrets(client).build();
    this.strategies = new StrategyBindings(manager);
    LOG.info("Secret manager active: strategy {}", config.strategy_target());
  }

  /** SCR re-binds the strategy reference itself when {@code strategy.target} changes. */
  @Modified
  void modified(SecretManagerConfiguration config) {
    LOG.info("Secret manager reconfigured: strategy {}", config.strategy_target());
  }

  @Reference(name = "strategy", service = StoreStrategy.class, cardinality = ReferenceCardinality.MULTIPLE,
      policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY, target = DEFAULT_STRATEGY)
  void bindStrategy(StoreStrategy strategy, Map<String, Object> properties) {
    strategies.bind(strategy, properties);
  }

  void unbindStrategy(StoreStrategy strategy, Map<String, Object> properties) {
    strategies.unbind(strategy, properties);
  }

  @Deactivate
  void deactivate() {
    manager.close();
  }

  @Override
  public Secret getSecret(String namespace, String name) {
    return manager.get(namespace, name);
  }

  @Override
  public Secret get(String namespace, String name) {
    return manager.get(namespace, name);
  }

  @Override
  public void registerPod(Pod pod) {
    manager.registerPod(pod);
  }

  @Override
  public void unregisterPod(Pod pod) {
    manager.unregisterPod(pod);
  }

  @Override
  public ResourceType<Secret> type() {
    return manager.type();
  }

  @Override
  public String strategy() {
    return manager.strategy();
  }

  @Override
  public List<RegisteredPod> registeredPods() {
    return manager.registeredPods();
  }

  @Override
  public List<CachedObject> objects() {
    return manager.objects();
  }

  @Override
  public Watch<Secret> watch(WatchOptions<Secret> options) {
    return manager.watch(options);
  }

  @Override
  public WatchStatistics watchStatistics() {
    return manager.watchStatistics();
  }
}
