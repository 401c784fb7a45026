package dev.nodelet.objectcache;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The shared part of a component that publishes a manager as a service (the ConfigMap and Secret managers): it
 * forwards {@link ObjectManager} to a {@link SwitchableObjectManager} and binds store strategies to it. The
 * Declarative Services annotations (activation, the {@code strategy} reference and its bind, updated and unbind
 * methods calling {@link #bindStrategy}, {@link #updateStrategy} and {@link #unbindStrategy}) stay on the concrete
 * component class.
 *
 * @param <T> the object type
 */
@ProviderType
public abstract class ManagerService<T extends HasMetadata> implements ObjectManager<T> {

  private final SwitchableObjectManager<T> manager;
  private final StrategyBindings strategies;

  /** @param manager the manager to publish; closed by {@link #close()} */
  protected ManagerService(SwitchableObjectManager<T> manager) {
    this.manager = Objects.requireNonNull(manager, "manager");
    this.strategies = new StrategyBindings(manager);
  }

  /** To be called by the component's bind method of its {@code strategy} reference. */
  protected final void bindStrategy(StoreStrategy strategy, Map<String, ?> properties) {
    strategies.bind(strategy, properties);
  }

  /** To be called by the component's unbind method of its {@code strategy} reference. */
  protected final void unbindStrategy(StoreStrategy strategy, Map<String, ?> properties) {
    strategies.unbind(strategy, properties);
  }

  /**
   * To be called by the component's updated method of its {@code strategy} reference: a strategy service whose
   * properties changed (a new configuration of its component) is taken afresh.
   *
   * @since 1.4
   */
  protected final void updateStrategy(StoreStrategy strategy, Map<String, ?> properties) {
    strategies.update(strategy, properties);
  }

  /** Closes the manager: to be called when the component deactivates. */
  protected final void close() {
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
  public final List<RegisteredPod> registeredPods() {
    return manager.registeredPods();
  }

  @Override
  public final List<CachedObject> objects() {
    return manager.objects();
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
