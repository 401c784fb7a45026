package dev.nodelet.pods.internal;

import java.util.Dictionary;
import java.util.Hashtable;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.cm.ConfigurationPlugin;

/**
 * The values a container's configuration takes from Secrets, kept in memory only: Configuration Admin stores the
 * configuration without them (its file persistence writes what it is given, in clear), and this
 * {@link ConfigurationPlugin} adds them each time the configuration is handed to the container's bundle, that is to
 * a {@code ManagedService} of that bundle or to Declarative Services, which reads a component's configuration with
 * {@code Configuration.getProcessedProperties}. The plugin names the configurations it serves in {@code cm.target},
 * and adds values only for a service of the bundle at the configuration's location: another bundle that asks for
 * the processed properties gets none.
 */
final class SecretValues implements ConfigurationPlugin, AutoCloseable {

  /** A {@code cm.target} that names no configuration, while none holds Secret values. */
  static final String NO_TARGET = "dev.nodelet.pods.no-secrets";

  /** Modifies (a ranking within 0..1000), and late: Secret values are not processed further by other plugins. */
  static final int RANKING = 1000;

  /** What a configuration gets: the location it is bound to and the values by property name. */
  private record Entry(String location, Map<String, String> values) {
    @Override
    public String toString() {
      return "Entry[location=" + location + ", names=" + values.keySet() + "]"; // never the values
    }
  }

  private final Map<String, Entry> byPid = new ConcurrentHashMap<>(); // by targeted PID
  private ServiceRegistration<ConfigurationPlugin> registration; // guarded by this; null before register, closed

  /** Registers the plugin. */
  synchronized SecretValues register(BundleContext context) {
    registration = context.registerService(ConfigurationPlugin.class, this, properties());
    return this;
  }

  /**
   * Sets the Secret values of a configuration; none removes them.
   *
   * @param pid the configuration's (targeted) PID
   * @param location the location the configuration is bound to
   * @param values the values by property name
   * @return true if they differ from what the configuration had: it must be delivered again
   */
  synchronized boolean put(String pid, String location, Map<String, String> values) {
    Entry next = values.isEmpty() ? null : new Entry(location, Map.copyOf(values));
    Entry previous = next == null ? byPid.remove(pid) : byPid.put(pid, next);
    if ((previous == null) != (next == null)) {
      retarget();
    }
    return !Objects.equals(previous, next);
  }

  /** Forgets the values of every configuration bound to the location. */
  synchronized void remove(String location) {
    if (byPid.values().removeIf(e -> e.location().equals(location))) {
      retarget();
    }
  }

  /** @return the names of the properties of the configuration that hold Secret values (for tests) */
  Set<String> names(String pid) {
    Entry entry = byPid.get(pid);
    return entry == null ? Set.of() : entry.values().keySet();
  }

  @Override
  public void modifyConfiguration(ServiceReference<?> reference, Dictionary<String, Object> properties) {
    Object pid = properties.get(Constants.SERVICE_PID);
    Entry entry = pid == null ? null : byPid.get(pid.toString());
    if (entry == null || reference == null) {
      return;
    }
    Bundle bundle = reference.getBundle();
    if (bundle == null || !entry.location().equals(bundle.getLocation())) {
      return; // only the container's own bundle receives them
    }
    entry.values().forEach(properties::put);
  }

  private void retarget() {
    if (registration != null) {
      try {
        registration.setProperties(properties());
      } catch (IllegalStateException e) {
        // unregistered: the bundle is stopping
      }
    }
  }

  private Dictionary<String, Object> properties() {
    Dictionary<String, Object> properties = new Hashtable<>();
    properties.put(ConfigurationPlugin.CM_TARGET, byPid.isEmpty() ? new String[] {NO_TARGET}
        : byPid.keySet().stream().sorted().toArray(String[]::new));
    properties.put(ConfigurationPlugin.CM_RANKING, RANKING);
    properties.put(Constants.SERVICE_DESCRIPTION, "Nodelet: Secret values of pod containers' configurations");
    return properties;
  }

  /** Unregisters the plugin and forgets every value. */
  @Override
  public synchronized void close() {
    byPid.clear();
    if (registration != null) {
      try {
        registration.unregister();
      } catch (IllegalStateException e) {
        // the bundle is stopping: gone already
      }
      registration = null;
    }
  }
}
