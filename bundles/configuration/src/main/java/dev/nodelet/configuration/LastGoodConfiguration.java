package dev.nodelet.configuration;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one way a Nodelet component takes its configuration. Each configuration is validated into settings; the
 * component applies a valid one in place from its {@code @Modified} method; an invalid one is refused with one error
 * naming the key, and the last good settings stay in force. A component whose first configuration is invalid stays
 * active and waits: it publishes none of its services (see {@link #publishing}), and a health check tagged
 * {@value #READY_TAG} holds readiness, saying which key is wrong, until a valid configuration comes through
 * {@code @Modified}; the same when applying a valid one fails (a port in use, say). So a component never fails its
 * activation over its configuration, and fixing a {@code .cfg} file is all it takes to bring it up.
 *
 * @param <C> the configuration type (an {@code @ObjectClassDefinition} interface)
 * @param <S> the validated settings; {@code equals} tells an unchanged configuration (settings without
 *     {@code equals} are applied every time)
 */
public final class LastGoodConfiguration<C, S> {

  /** The tag of the health check of a waiting component: readiness. */
  public static final String READY_TAG = "nodelet";

  private static final Logger LOG = LoggerFactory.getLogger(LastGoodConfiguration.class);

  private final String pid;
  private final String component;
  private final Function<? super C, ? extends S> validate;
  private final ServicePublisher publisher;
  private final List<Service> services = new ArrayList<>(); // guarded by this
  private final List<AutoCloseable> owned = new ArrayList<>(); // guarded by this
  private volatile S current; // null while waiting for a valid configuration
  private volatile String problem; // why it waits; null once a valid configuration came
  private ServicePublisher.Registration check; // guarded by this; registered while it waits
  private String refused; // guarded by this; the error of the last configuration refused since one was applied
  private Optional<ConfigurationKeys> keys; // guarded by this; from the first configuration's type; empty if untyped

  /** A service of the component, registered once a valid configuration is in force. */
  private static final class Service {
    final List<String> classes;
    final Object object;
    final Map<String, ?> properties;
    ServicePublisher.Registration registration;

    Service(List<String> classes, Object object, Map<String, ?> properties) {
      this.classes = classes;
      this.object = object;
      this.properties = properties;
    }
  }

  private LastGoodConfiguration(String pid, String component, Function<? super C, ? extends S> validate,
      ServicePublisher publisher) {
    this.pid = Objects.requireNonNull(pid, "pid");
    this.component = Objects.requireNonNull(component, "component");
    this.validate = Objects.requireNonNull(validate, "validate");
    this.publisher = publisher;
  }

  /**
   * Takes a component's configuration: it reports its waiting through a health check and registers its services
   * (see {@link #publishing}) once its settings are in force. Every configuration, the first included, goes through
   * {@link #apply}.
   *
   * @param pid the configuration PID, for messages and the health check's name
   * @param component what the component is, for messages
   * @param validate turns a configuration into settings; throws {@link IllegalArgumentException} naming the key
   *     that is wrong and why
   * @param publisher where the health check and the services go
   * @param <C> the configuration type
   * @param <S> the settings type
   * @return the helper, holding no settings yet
   */
  public static <C, S> LastGoodConfiguration<C, S> waiting(String pid, String component,
      Function<? super C, ? extends S> validate, ServicePublisher publisher) {
    return new LastGoodConfiguration<>(pid, component, validate, Objects.requireNonNull(publisher, "publisher"));
  }

  /**
   * Declares a service of the component: registered when the first valid configuration has been applied, its
   * properties replaced with every later one (so that consumers see the change), withdrawn by {@link #close}.
   * Declare before the first {@link #apply}.
   *
   * @param service the service object
   * @param properties service properties of its own, besides the component's properties
   * @param classes the interfaces it is registered under
   * @return this
   */
  public synchronized LastGoodConfiguration<C, S> publishing(Object service, Map<String, ?> properties,
      Class<?>... classes) {
    services.add(new Service(Arrays.stream(classes).map(Class::getName).toList(), service,
        Map.copyOf(properties)));
    return this;
  }

  /**
   * Hands over what the component runs with its settings (its {@link Running} instance, an open directory): closed
   * by {@link #close}, in this order, after the services are withdrawn.
   *
   * @param resources what to close with the component
   * @return this
   */
  public synchronized LastGoodConfiguration<C, S> closing(AutoCloseable... resources) {
    owned.addAll(Arrays.asList(resources));
    return this;
  }

  /**
   * @return the settings in force
   * @throws IllegalStateException if no valid configuration came yet
   */
  public S current() {
    S settings = current;
    if (settings == null) {
      throw new IllegalStateException("Configuration " + pid + ": " + component + " has no valid configuration yet");
    }
    return settings;
  }

  /** @return the settings in force; empty until a valid configuration came */
  public Optional<S> settings() {
    return Optional.ofNullable(current);
  }

  /** @return why the component waits: the error of its invalid configuration; empty once a valid one came */
  public Optional<String> problem() {
    return Optional.ofNullable(problem);
  }

  /**
   * A new configuration, the first included (for the component's constructor and {@code @Modified} method). A
   * valid one that differs from the settings in force is handed to {@code change}, then becomes the settings in
   * force: the waiting ends (its health check goes), and the services are registered, or given the new properties.
   * An invalid one is refused: one error naming the key is logged, the settings in force stay, and a component
   * without any waits, reporting it through its health check. A key of {@code properties} that the configuration
   * type does not have (a misspelling) gets a warning, once, naming the nearest key it has (see
   * {@link ConfigurationKeys}).
   *
   * @param config the configuration
   * @param properties the component's properties, as Declarative Services gives them (private ones, starting with
   *     '.', are not published)
   * @param change applies the new settings to the component; if it throws (a port in use, say), the error is logged
   *     and the component waits as with an invalid configuration, until a valid one can be applied
   * @return whether the configuration was applied
   */
  public synchronized boolean apply(C config, Map<String, ?> properties, Consumer<? super S> change) {
    keys(config).ifPresent(k -> k.check(properties));
    S next;
    try {
      next = Objects.requireNonNull(validate.apply(config));
    } catch (IllegalArgumentException e) {
      refuse(e.getMessage());
      return false;
    }
    if (next.equals(current)) {
      return false;
    }
    try {
      change.accept(next);
    } catch (RuntimeException e) {
      // e.g. a port in use: what is in force now is unknown, so the component waits and any valid one applies again
      LOG.error("Configuration {} could not be applied to {}: {}", pid, component, e.getMessage());
      current = null;
      refused = null;
      waitFor(e.getMessage());
      return false;
    }
    current = next;
    refused = null;
    LOG.info("Configuration {} applied to {}: {}", pid, component, next);
    if (check != null) {
      check.unregister();
      check = null;
    }
    problem = null;
    publish(properties);
    return true;
  }

  /** @return the warnings given for keys the configuration type does not have, oldest first */
  public synchronized List<String> unknownKeys() {
    return keys == null ? List.of() : keys.map(ConfigurationKeys::warnings).orElse(List.of());
  }

  private Optional<ConfigurationKeys> keys(C config) {
    if (keys == null) {
      // Declarative Services and the OSGi converter hand a proxy of the annotation type
      List<Class<?>> types = config == null ? List.of()
          : Arrays.stream(config.getClass().getInterfaces()).filter(Class::isAnnotation).toList();
      Set<String> known = new HashSet<>();
      types.forEach(type -> known.addAll(ConfigurationKeys.keysOf(type)));
      keys = types.isEmpty() ? Optional.empty() : Optional.of(new ConfigurationKeys(pid, known));
    }
    return keys;
  }

  private void refuse(String error) {
    if (error.equals(refused)) {
      return; // the same configuration again (a file touched, say): said once
    }
    refused = error;
    if (current != null) {
      LOG.error("Configuration {} refused, {} keeps its last good configuration ({}): {}", pid, component, current,
          error);
      return;
    }
    LOG.error("Configuration {} is invalid, {} waits for a valid one: {}", pid, component, error);
    waitFor(error);
  }

  private void waitFor(String error) {
    // a factory configuration a~b comes from the file a-b.cfg
    problem = component + " waits for a valid configuration " + pid + ": " + error + "; correct it (etc/"
        + pid.replace('~', '-') + ".cfg)";
    if (check == null) {
      check = publisher.register(List.of(HealthCheck.class.getName()), (HealthCheck) this::health,
          Map.of(HealthCheck.NAME, pid, HealthCheck.TAGS, new String[] {READY_TAG}));
    }
  }

  private Result health() {
    String waiting = problem;
    return waiting == null ? new Result(Result.Status.OK, "configuration " + pid + " in force")
        : new Result(Result.Status.CRITICAL, waiting);
  }

  private void publish(Map<String, ?> componentProperties) {
    for (Service service : services) {
      Map<String, Object> properties = new HashMap<>();
      componentProperties.forEach((key, value) -> {
        if (!key.startsWith(".")) {
          properties.put(key, value);
        }
      });
      properties.putAll(service.properties);
      if (service.registration == null) {
        service.registration = publisher.register(service.classes, service.object, properties);
      } else {
        service.registration.update(properties);
      }
    }
  }

  /**
   * Withdraws the services and the health check, then closes what {@link #closing} was given; for the component's
   * {@code @Deactivate} method. A resource that fails to close is logged, and the next ones are closed still.
   */
  public void close() {
    // closed outside this lock: a component's own lock is taken before this one when it applies a configuration
    List<AutoCloseable> resources;
    synchronized (this) {
      for (Service service : services) {
        if (service.registration != null) {
          service.registration.unregister();
          service.registration = null;
        }
      }
      if (check != null) {
        check.unregister();
        check = null;
      }
      resources = List.copyOf(owned);
    }
    for (AutoCloseable resource : resources) {
      try {
        resource.close();
      } catch (Exception e) {
        LOG.error("{} could not close {}: {}", component, resource, e.getMessage(), e);
      }
    }
  }
}
