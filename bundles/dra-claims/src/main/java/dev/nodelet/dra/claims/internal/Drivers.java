package dev.nodelet.dra.claims.internal;

import dev.nodelet.dra.ClaimPreparation;
import dev.nodelet.dra.DeviceHealthSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The driver services by name, in the order they came, one list per role: the newest {@link ClaimPreparation} of a
 * name is the one called, the newest {@link DeviceHealthSource} of a name is the one whose health is followed.
 */
public final class Drivers {

  private final Map<String, List<ClaimPreparation>> preparing = new ConcurrentHashMap<>();
  private final Map<String, List<DeviceHealthSource>> healthSources = new ConcurrentHashMap<>();
  private final HealthTracker health;

  public Drivers(HealthTracker health) {
    this.health = health;
  }

  public void add(ClaimPreparation driver) {
    append(preparing, driver.driverName(), driver);
  }

  public void remove(ClaimPreparation driver) {
    removeFrom(preparing, driver.driverName(), driver);
  }

  public void add(DeviceHealthSource source) {
    String name = source.driverName();
    append(healthSources, name, source);
    health.follow(name, source);
  }

  /**
   * A health source went away. Only when it was the newest does health move to the newest one left; removing an
   * older registration leaves the newer one's stream untouched. With none left the driver's health is forgotten.
   */
  public void remove(DeviceHealthSource source) {
    String name = source.driverName();
    Removed<DeviceHealthSource> removed = removeFrom(healthSources, name, source);
    if (removed.left() == null) {
      health.forget(name);
    } else if (removed.wasNewest()) {
      health.follow(name, removed.left().get(removed.left().size() - 1));
    }
  }

  /** The registration that prepares the claims of this driver, or null. */
  public ClaimPreparation preparing(String name) {
    List<ClaimPreparation> registered = preparing.get(name);
    return registered == null || registered.isEmpty() ? null : registered.get(registered.size() - 1);
  }

  private record Removed<T>(List<T> left, boolean wasNewest) {
  }

  private static <T> void append(Map<String, List<T>> byName, String name, T service) {
    byName.compute(name, (k, list) -> {
      List<T> next = list == null ? new ArrayList<>() : new ArrayList<>(list);
      next.add(service);
      return next;
    });
  }

  private static <T> Removed<T> removeFrom(Map<String, List<T>> byName, String name, T service) {
    boolean[] wasNewest = new boolean[1];
    List<T> left = byName.computeIfPresent(name, (k, list) -> {
      wasNewest[0] = !list.isEmpty() && list.get(list.size() - 1) == service;
      List<T> next = new ArrayList<>(list);
      next.removeIf(d -> d == service);
      return next.isEmpty() ? null : next;
    });
    return new Removed<>(left, wasNewest[0]);
  }
}
