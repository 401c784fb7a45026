package dev.nodelet.dra.claims.internal;

import dev.nodelet.dra.DraDriver;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The driver registrations by name, in the order they came, and which of them is called: the newest one of a name
 * that prepares claims. Each name's newest registration is the one whose health is followed.
 */
public final class Drivers {

  private final Map<String, List<DraDriver>> byName = new ConcurrentHashMap<>();
  private final HealthTracker health;

  public Drivers(HealthTracker health) {
    this.health = health;
  }

  public void add(DraDriver driver) {
    String name = driver.driverName();
    byName.compute(name, (k, list) -> {
      List<DraDriver> next = list == null ? new ArrayList<>() : new ArrayList<>(list);
      next.add(driver);
      return next;
    });
    health.follow(name, driver);
  }

  /**
   * A registration went away. Only when it was the newest does health move to the newest one left; removing an
   * older registration leaves the newer one's health stream untouched.
   */
  public void remove(DraDriver driver) {
    String name = driver.driverName();
    boolean[] wasNewest = new boolean[1];
    List<DraDriver> left = byName.computeIfPresent(name, (k, list) -> {
      wasNewest[0] = !list.isEmpty() && list.get(list.size() - 1) == driver;
      List<DraDriver> next = new ArrayList<>(list);
      next.removeIf(d -> d == driver);
      return next.isEmpty() ? null : next;
    });
    if (left == null) {
      health.forget(name);
    } else if (wasNewest[0]) {
      health.follow(name, left.get(left.size() - 1));
    }
  }

  /** The registration that prepares the claims of this driver, or null. */
  public DraDriver preparing(String name) {
    List<DraDriver> registered = byName.get(name);
    if (registered == null) {
      return null;
    }
    for (int i = registered.size() - 1; i >= 0; i--) {
      if (registered.get(i).preparesClaims()) {
        return registered.get(i);
      }
    }
    return null;
  }
}
