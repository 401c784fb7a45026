package dev.nodelet.configuration;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;

/**
 * The framework's service registry as far as a component sees it, for plain-Java tests of components: what is
 * registered now with its properties, and the history of registrations. Shared with the bundles' tests (test-jar).
 */
public final class RecordingPublisher implements ServicePublisher {

  /** The services registered now, with their properties. */
  public final Map<Object, Map<String, Object>> registered = new LinkedHashMap<>();
  /** "register [classes]", "update [classes]", "unregister [classes]", in order. */
  public final List<String> history = new ArrayList<>();

  @Override
  public synchronized Registration register(List<String> classes, Object service, Map<String, ?> properties) {
    registered.put(service, Map.copyOf(properties));
    history.add("register " + classes);
    return new Registration() {
      @Override
      public void update(Map<String, ?> next) {
        synchronized (RecordingPublisher.this) {
          registered.put(service, Map.copyOf(next));
          history.add("update " + classes);
        }
      }

      @Override
      public void unregister() {
        synchronized (RecordingPublisher.this) {
          if (registered.remove(service) != null) {
            history.add("unregister " + classes);
          }
        }
      }
    };
  }

  /** @return the registered health check (a waiting component's) */
  public synchronized HealthCheck check() {
    return healthCheck().orElseThrow(() -> new AssertionError("no health check registered: " + history));
  }

  /** @return the registered health check, if any */
  public synchronized Optional<HealthCheck> healthCheck() {
    return registered.keySet().stream().filter(HealthCheck.class::isInstance).map(HealthCheck.class::cast)
        .findFirst();
  }

  /** @return the registered health checks by their name ({@code hc.name}) */
  public synchronized Map<String, HealthCheck> healthChecks() {
    Map<String, HealthCheck> checks = new LinkedHashMap<>();
    services(HealthCheck.class).forEach(check -> checks.put((String) registered.get(check).get(HealthCheck.NAME),
        check));
    return checks;
  }

  /** @return the status and first message of the registered health check, e.g. "CRITICAL port: must be ..." */
  public String health() {
    Result result = check().execute();
    return result.getStatus() + " " + result.iterator().next().getMessage();
  }

  /** @return the services registered now of the class */
  public synchronized <T> List<T> services(Class<T> type) {
    return registered.keySet().stream().filter(type::isInstance).map(type::cast).toList();
  }

  /**
   * Builds a component on a publisher of its own and tells why it waits.
   *
   * @param build the component's constructor, given the publisher
   * @param deactivate the component's deactivation, run after
   * @param <T> the component type
   * @return what its health check says, e.g. "CRITICAL the pod source waits for a valid configuration ..."
   */
  public static <T> String waits(Function<RecordingPublisher, T> build, Consumer<T> deactivate) {
    RecordingPublisher publisher = new RecordingPublisher();
    T component = build.apply(publisher);
    try {
      return publisher.health();
    } finally {
      deactivate.accept(component);
    }
  }
}
