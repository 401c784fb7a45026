package dev.nodelet.pods.internal;

import java.io.IOException;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.Map;
import org.osgi.framework.Bundle;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * One Configuration Admin configuration per container, under a targeted PID
 * ({@code <pid>|<symbolic name>|<version>|<location>}) and bound to the location of the container's bundle: Config
 * Admin delivers it to that bundle only, as the configuration of the plain PID it asks for. So two pods that run
 * the same bundle with the same PID each get their own, and no other bundle receives it. Properties change only
 * when they differ.
 */
final class ConfigDelivery {

  private final ConfigurationAdmin admin;

  ConfigDelivery(ConfigurationAdmin admin) {
    this.admin = admin;
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
    String location = bundle.getLocation();
    Configuration configuration = admin.getConfiguration(targeted(pid, bundle), location);
    if (!location.equals(configuration.getBundleLocation())) {
      configuration.setBundleLocation(location); // a targeted PID names the location: it is this bundle's alone
    }
    Dictionary<String, Object> dictionary = new Hashtable<>(properties);
    configuration.updateIfDifferent(dictionary);
  }

  /** Deletes every configuration bound to the container's location. */
  void remove(String location) throws IOException {
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
