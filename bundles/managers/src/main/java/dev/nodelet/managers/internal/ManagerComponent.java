package dev.nodelet.managers.internal;

import dev.nodelet.configuration.ConfigurationKeys;
import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.PodReceipt;
import dev.nodelet.objectcache.RegisteredPod;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchOptions;
import dev.nodelet.objectcache.WatchStatistics;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One manager implementation, published once per resource type ({@link ConfigMapManagerComponent},
 * {@link SecretManagerComponent}). The strategy reference is dynamic, so a new {@code strategy.target} or a strategy
 * bundle coming and going moves the registrations to another store without re-activating; only a new client
 * re-activates it (the pod source then registers the pods again). The subclasses carry the component's services,
 * PID and activation; bnd takes the reference and lifecycle methods from here ({@code -dsannotations-options:
 * inherit}). It forwards {@link ObjectManager} to a {@link SwitchableObjectManager} that {@link StrategyBindings}
 * moves between the bound strategy services.
 *
 * @param <T> the object type
 */
abstract class ManagerComponent<T extends HasMetadata> implements ObjectManager<T> {

  static final String DEFAULT_STRATEGY = "(" + StoreStrategy.PROPERTY + "=watch)";

  private static final Logger LOG = LoggerFactory.getLogger(ManagerComponent.class);

  private final SwitchableObjectManager<T> manager;
  private final StrategyBindings strategies;
  private final String pid;
  /** Warns about a misspelt key ({@code strategy.targt}), which would leave the default strategy in force. */
  private final ConfigurationKeys keys;

  /**
   * @param manager the manager to publish, built with the bundle's metrics; closed on deactivation, which takes its
   *     series from the metrics
   */
  ManagerComponent(SwitchableObjectManager<T> manager, String pid, ManagerConfiguration config,
      Map<String, Object> properties) {
    this.manager = manager;
    this.strategies = new StrategyBindings(manager);
    this.pid = pid;
    this.keys = ConfigurationKeys.of(pid, ManagerConfiguration.class, ObjectManager.RESOURCE_PROPERTY,
        ObjectManager.PID_PROPERTY);
    keys.check(properties);
    LOG.info("Manager of {} active ({}): strategy {}", manager.type().plural(), pid, config.strategy_target());
    try {
      StrategyTarget.check(pid, config.strategy_target());
    } catch (RuntimeException e) {
      // not activated, so never deactivated: its watch timer and its metrics series end here
      manager.close();
      throw e;
    }
  }

  /**
   * SCR re-binds the strategy reference itself when {@code strategy.target} changes, without re-activating: no
   * registration is lost, whatever the new value.
   */
  @Modified
  void modified(ManagerConfiguration config, Map<String, Object> properties) {
    keys.check(properties);
    LOG.info("Manager of {} reconfigured ({}): strategy {}", type().plural(), pid, config.strategy_target());
    StrategyTarget.check(pid, config.strategy_target());
  }

  @Reference(name = "strategy", service = StoreStrategy.class, cardinality = ReferenceCardinality.MULTIPLE,
      policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY, target = DEFAULT_STRATEGY,
      updated = "updatedStrategy")
  void addStrategy(StoreStrategy strategy, Map<String, Object> properties) {
    strategies.bind(strategy, properties);
  }

  /** A strategy took a new configuration: its stores built before are replaced by fresh ones. */
  void updatedStrategy(StoreStrategy strategy, Map<String, Object> properties) {
    strategies.update(strategy, properties);
  }

  void removeStrategy(StoreStrategy strategy, Map<String, Object> properties) {
    strategies.unbind(strategy, properties);
  }

  /** The warnings given for keys the configuration does not have; for tests. */
  List<String> unknownKeys() {
    return keys.warnings();
  }

  @Deactivate
  void deactivate() {
    manager.close();
  }

  @Override
  public final T get(String namespace, String name) {
    return manager.get(namespace, name);
  }

  @Override
  public final void registerPod(Pod pod) {
    manager.registerPod(pod);
  }

  @Override
  public final void unregisterPod(Pod pod) {
    manager.unregisterPod(pod);
  }

  @Override
  public final ResourceType<T> type() {
    return manager.type();
  }

  @Override
  public final String strategy() {
    return manager.strategy();
  }

  @Override
  public final boolean builtInStrategy() {
    return manager.builtInStrategy();
  }

  @Override
  public final List<RegisteredPod> registeredPods() {
    return manager.registeredPods();
  }

  @Override
  public final List<CachedObject> objects() {
    return manager.objects();
  }

  @Override
  public final List<PodReceipt> receipts() {
    return manager.receipts();
  }

  @Override
  public final Watch<T> watch(WatchOptions<T> options) {
    return manager.watch(options);
  }

  @Override
  public final WatchStatistics watchStatistics() {
    return manager.watchStatistics();
  }
}
