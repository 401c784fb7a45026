package dev.nodelet.managers.internal;

import dev.nodelet.objectcache.StoreStrategy;
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
}
