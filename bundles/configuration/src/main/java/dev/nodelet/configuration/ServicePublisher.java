package dev.nodelet.configuration;

import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;

/**
 * Where a component registers the services it can only offer with a valid configuration: the framework's service
 * registry ({@link #of(BundleContext)}), or a test's record of them.
 */
@FunctionalInterface
public interface ServicePublisher {

  /**
   * Registers a service.
   *
   * @param classes the interface names it is registered under
   * @param service the service object, an instance of every one of them
   * @param properties its service properties
   * @return its registration
   */
  Registration register(List<String> classes, Object service, Map<String, ?> properties);

  /** One registered service. */
  interface Registration {

    /** Replaces the service properties. */
    void update(Map<String, ?> properties);

    /** Withdraws the service; does nothing if it is gone already (its bundle stopping). */
    void unregister();
  }

  /**
   * @param context the bundle context of the registering component
   * @return a publisher registering in the framework's service registry
   */
  static ServicePublisher of(BundleContext context) {
    return (classes, service, properties) -> {
      ServiceRegistration<?> registration =
          context.registerService(classes.toArray(String[]::new), service, dictionary(properties));
      return new Registration() {
        @Override
        public void update(Map<String, ?> next) {
          registration.setProperties(dictionary(next));
        }

        @Override
        public void unregister() {
          try {
            registration.unregister();
          } catch (IllegalStateException e) {
            // unregistered already: the bundle is stopping
          }
        }
      };
    };
  }

  private static Dictionary<String, Object> dictionary(Map<String, ?> properties) {
    return new Hashtable<>(properties);
  }
}
