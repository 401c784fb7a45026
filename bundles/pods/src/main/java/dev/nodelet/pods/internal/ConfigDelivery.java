package dev.nodelet.pods.internal;

import dev.nodelet.pods.PodBundles;
import java.io.IOException;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.osgi.framework.Bundle;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * One Configuration Admin configuration per container, under a targeted PID
 * ({@code <pid>|<symbolic name>|<version>|<location>}) and bound to the location of the container's bundle: Config
 * Admin delivers it to that bundle only, as the configuration of the plain PID it asks for. So two pods that run
 * the same bundle with the same PID each get their own, and no other bundle receives it. Properties change only
 * when they differ.
 *
 * <p>Values taken from Secrets are not part of the stored configuration, which Configuration Admin writes to disk:
 * it holds their names only ({@link PodBundles#SECRETS}), and {@link SecretValues} adds the values when the
 * configuration is handed to the bundle. When only those values changed, the configuration is updated with what it
 * holds, so that it is handed over again.
 */
final class ConfigDelivery {

  private final ConfigurationAdmin admin;
  private final SecretValues secrets;

  /** For reading what is stored ({@link #bound}). */
  ConfigDelivery(ConfigurationAdmin admin) {
    this(admin, new SecretValues());
  }

  ConfigDelivery(ConfigurationAdmin admin, SecretValues secrets) {
    this.admin = admin;
    this.secrets = secrets;
  }

  /** @return the targeted PID of a container's configuration */
  static String targeted(String pid, Bundle bundle) {
    return pid + "|" + bundle.getSymbolicName() + "|" + bundle.getVersion() + "|" + bundle.getLocation();
  }

  /**
   * @param pid the PID the pod chose
   * @param bundle the container's bundle
   * @param properties the configuration
   * @throws IOException if Config Admin cannot store it
   */
  void deliver(String pid, Bundle bundle, Map<String, Object> properties) throws IOException {
    deliver(pid, bundle, properties, Set.of());
  }

  /**
   * @param pid the PID the pod chose
   * @param bundle the container's bundle
   * @param properties the configuration
   * @param fromSecrets the names of the properties whose values come from Secrets: never stored
   * @throws IOException if Config Admin cannot store it
   */
  void deliver(String pid, Bundle bundle, Map<String, Object> properties, Set<String> fromSecrets)
      throws IOException {
    String location = bundle.getLocation();
    String targeted = targeted(pid, bundle);
    Configuration configuration = admin.getConfiguration(targeted, location);
    if (!location.equals(configuration.getBundleLocation())) {
      configuration.setBundleLocation(location); // a targeted PID names the location: it is this bundle's alone
    }
    Dictionary<String, Object> stored = new Hashtable<>();
    Map<String, String> secretValues = new TreeMap<>();
    properties.forEach((name, value) -> {
      if (fromSecrets.contains(name)) {
        secretValues.put(name, value.toString());
      } else {
        stored.put(name, value);
      }
    });
    if (!secretValues.isEmpty()) {
      stored.put(PodBundles.SECRETS, secretValues.keySet().toArray(String[]::new));
    }
    // the values first: the plugin adds them to every delivery from now on
    boolean valuesChanged = secrets.put(targeted, location, secretValues);
    if (!configuration.updateIfDifferent(stored) && valuesChanged) {
      configuration.update(stored); // the same stored content, other Secret values: handed over again
    }
  }

  /** Deletes every configuration bound to the container's location. */
  void remove(String location) throws IOException {
    secrets.remove(location);
    Configuration[] found;
    try {
      found = admin.listConfigurations("(" + ConfigurationAdmin.SERVICE_BUNDLELOCATION + "=" + escape(location)
          + ")");
    } catch (org.osgi.framework.InvalidSyntaxException e) {
      throw new IllegalStateException("a filter made of an escaped location is valid", e);
    }
    if (found != null) {
      for (Configuration configuration : found) {
        configuration.delete();
      }
    }
  }

  /** @return the configurations bound to the location, for tests and the shell */
  Configuration[] bound(String location) throws IOException {
    try {
      return admin.listConfigurations("(" + ConfigurationAdmin.SERVICE_BUNDLELOCATION + "=" + escape(location)
          + ")");
    } catch (org.osgi.framework.InvalidSyntaxException e) {
      throw new IllegalStateException("a filter made of an escaped location is valid", e);
    }
  }

  private static String escape(String value) {
    return value.replace("\\", "\\\\").replace("*", "\\*").replace("(", "\\(").replace(")", "\\)");
  }
}
