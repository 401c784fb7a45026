package dev.nodelet.managers.internal;

import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.cache.core.SwitchableObjectManager;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds a manager from the {@link StoreStrategy} services a component is bound to: the manager uses the best bound
 * service (highest {@code service.ranking}, then lowest {@code service.id}) and the built-in {@code get} while none
 * is bound. For the bind and unbind methods of a dynamic, multiple reference.
 */
final class StrategyBindings {

  private static final Logger LOG = LoggerFactory.getLogger(StrategyBindings.class);

  private static final String SERVICE_ID = "service.id";
  private static final String SERVICE_RANKING = "service.ranking";

  private record Bound(StoreStrategy strategy, String name, int ranking, long id) {
  }

  private static final Comparator<Bound> BEST_FIRST =
      Comparator.comparingInt(Bound::ranking).reversed().thenComparingLong(Bound::id);

  private final SwitchableObjectManager<?> manager;

  // guarded by this
  private final List<Bound> bound = new ArrayList<>();
  private Bound inUse;
  private boolean fresh;

  /** @param manager the manager to feed; starts on whatever strategy it uses */
  StrategyBindings(SwitchableObjectManager<?> manager) {
    this.manager = Objects.requireNonNull(manager, "manager");
  }

  /**
   * A strategy service became available.
   *
   * @param strategy the service
   * @param properties its service properties
   */
  synchronized void bind(StoreStrategy strategy, Map<String, ?> properties) {
    bound.add(new Bound(strategy, name(properties), ranking(properties), id(properties)));
    choose();
  }

  /**
   * A strategy service went away.
   *
   * @param strategy the service
   * @param properties its service properties
   */
  synchronized void unbind(StoreStrategy strategy, Map<String, ?> properties) {
    long id = id(properties);
    bound.removeIf(b -> b.id() == id);
    choose();
  }

  /**
   * The service properties of a bound strategy service changed, e.g. because its component took a new
   * configuration: the bindings are ordered again, and if it is the strategy in use the manager moves to a fresh
   * store of it, so that stores built before the change (with the old settings) are retired. For the updated
   * method of the reference.
   *
   * @param strategy the service
   * @param properties its new service properties
   */
  synchronized void update(StoreStrategy strategy, Map<String, ?> properties) {
    long id = id(properties);
    if (!bound.removeIf(b -> b.id() == id)) {
      return;
    }
    bound.add(new Bound(strategy, name(properties), ranking(properties), id));
    if (inUse != null && inUse.id() == id) {
      inUse = null; // whatever is best now, the manager takes a fresh store of it
      fresh = true;
    }
    choose();
  }

  private void choose() {
    Optional<Bound> best = bound.stream().min(BEST_FIRST);
    boolean refresh = fresh;
    fresh = false;
    if (!refresh && best.equals(Optional.ofNullable(inUse))) {
      return;
    }
    if (best.isEmpty()) {
      manager.useBuiltInStrategy();
      inUse = null;
      return;
    }
    try {
      manager.useStrategy(best.get().name(), best.get().strategy());
      inUse = best.get();
    } catch (RuntimeException e) {
      // e.g. a strategy closing while it was chosen: stay on the store in use unless its service is gone
      LOG.warn("The {} manager could not move to the {} strategy: {}", manager.type(), best.get().name(),
          e.toString());
      if (inUse != null && !bound.contains(inUse)) {
        manager.useBuiltInStrategy();
        inUse = null;
      }
    }
  }

  private static String name(Map<String, ?> properties) {
    Object name = properties.get(StoreStrategy.PROPERTY);
    return name == null ? "(unnamed)" : name.toString();
  }

  private static int ranking(Map<String, ?> properties) {
    return properties.get(SERVICE_RANKING) instanceof Integer ranking ? ranking : 0;
  }

  private static long id(Map<String, ?> properties) {
    Object id = properties.get(SERVICE_ID);
    if (!(id instanceof Long)) {
      throw new IllegalArgumentException("service properties without a Long service.id: " + properties.keySet());
    }
    return (Long) id;
  }
}
