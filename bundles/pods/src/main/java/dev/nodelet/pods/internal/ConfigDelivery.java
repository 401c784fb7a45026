package dev.nodelet.pods.internal;

import dev.nodelet.pods.PodBundles;
import java.io.IOException;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.Map;
import org.osgi.framework.Constants;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * One Configuration Admin configuration per container, bound to the location of the container's bundle: Config
 * Admin delivers it to that bundle only. A PID already bound to another location, or one of Nodelet's own PIDs, is
 * refused, so that a pod cannot read or replace what another pod or Nodelet is given. Properties change only when
 * they differ.
 */
final class ConfigDelivery {

  private final ConfigurationAdmin admin;

  ConfigDelivery(ConfigurationAdmin admin) {
    this.admin = admin;
  }

  /**
   * @param pid the PID the pod chose
   * @param location the container's bundle location
   * @param properties the configuration
   * @throws ConfigError if the PID is not the pod's to take
   * @throws IOException if Config Admin cannot store it
   */
  void deliver(String pid, String location, Map<String, Object> properties) throws ConfigError, IOException {
    Configuration configuration = bound(pid, location);
    Dictionary<String, Object> dictionary = new Hashtable<>(properties);
    configuration.updateIfDifferent(dictionary);
  }

  /** Deletes the container's configuration, if it is bound to its location. */
  void remove(String pid, String location) throws IOException {
    Configuration[] found;
    try {
      found = admin.listConfigurations("(" + Constants.SERVICE_PID + "=" + escape(pid) + ")");
    } catch (org.osgi.framework.InvalidSyntaxException e) {
      throw new IllegalStateException("a filter made of an escaped PID is valid", e);
    }
    if (found != null) {
      for (Configuration configuration : found) {
        if (location.equals(configuration.getBundleLocation())) {
          configuration.delete();
        }
      }
    }
  }

  private Configuration bound(String pid, String location) throws ConfigError, IOException {
    if (pid.startsWith("dev.nodelet.") && !pid.startsWith(PodBundles.DEFAULT_PID_PREFIX)) {
      throw new ConfigError("configuration PID " + pid + " is Nodelet's own; choose another with the annotation "
          + PodBundles.PID_ANNOTATION_PREFIX + "<container>", false);
    }
    Configuration configuration = admin.getConfiguration(pid, location);
    if (!location.equals(configuration.getBundleLocation())) {
      throw new ConfigError("configuration PID " + pid + " is in use by another bundle; choose another with the "
          + "annotation " + PodBundles.PID_ANNOTATION_PREFIX + "<container>", false);
    }
    return configuration;
  }

  private static String escape(String value) {
    return value.replace("\\", "\\\\").replace("*", "\\*").replace("(", "\\(").replace(")", "\\)");
  }
}
