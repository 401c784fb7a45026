package dev.nodelet.dra.grpc.internal;

import static dev.nodelet.configuration.ConfigurationValues.within;

import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.dra.DraDriver;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Dictionary;
import java.util.Hashtable;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Registers a {@link DraDriver} service for every external driver that registers through the folder. A valid new
 * configuration restarts the folder watch and the connections in place: the drivers are withdrawn and registered
 * again, which the controller's grace period absorbs; an invalid one is refused naming the key and the last good one
 * stays. The component is the {@link MultiCollector} of the registered drivers' count.
 */
@Component(configurationPid = GrpcDraComponent.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL,
    immediate = true, service = MultiCollector.class)
@Designate(ocd = GrpcDraConfiguration.class)
public final class GrpcDraComponent implements MultiCollector {

  public static final String PID = "dev.nodelet.dra.grpc";
  /** Service properties of a registered driver, for the shell and for targeted references. */
  public static final String DRIVER_NAME_PROPERTY = "nodelet.dra.driver";
  public static final String ENDPOINT_PROPERTY = "nodelet.dra.grpc.endpoint";
  public static final String REGISTRATION_PROPERTY = "nodelet.dra.grpc.registration";
  /** The protocol chosen at registration: {@code v1.DRAPlugin}, {@code v1beta1.DRAPlugin} or {@code nodelet.dra.v1}. */
  public static final String PROTOCOL_PROPERTY = "nodelet.dra.grpc.protocol";

  /** The longest interval or timeout: a day. */
  static final long MAX_MILLIS = 24L * 60 * 60 * 1000;
  /** The most event loop threads. */
  static final int MAX_IO_THREADS = 64;

  /** Registers a driver as a service; returns what unregisters it. */
  interface Registry {
    Runnable register(DraDriver driver, Dictionary<String, Object> properties);
  }

  /** A validated configuration. */
  record Settings(Path folder, Duration pollInterval, Duration handshakeTimeout, Duration withdrawAfter,
      int ioThreads) {

    /** @throws IllegalArgumentException naming the key that is wrong and why */
    static Settings from(GrpcDraConfiguration config) {
      String folder = config.registration_folder() == null ? "" : config.registration_folder().strip();
      if (folder.isEmpty()) {
        throw new IllegalArgumentException("registration.folder: must not be empty");
      }
      Path path;
      try {
        path = Path.of(folder);
      } catch (InvalidPathException e) {
        throw new IllegalArgumentException("registration.folder: not a path (" + e.getMessage() + ")");
      }
      return new Settings(path,
          Duration.ofMillis(within("poll.interval.millis", config::poll_interval_millis, 10, MAX_MILLIS,
              "milliseconds")),
          Duration.ofMillis(within("handshake.timeout.millis", config::handshake_timeout_millis, 1, MAX_MILLIS,
              "milliseconds")),
          Duration.ofSeconds(within("unreachable.withdraw.seconds", config::unreachable_withdraw_seconds, 0,
              MAX_MILLIS / 1000, "seconds")),
          (int) within("io.threads", config::io_threads, 1, MAX_IO_THREADS, ""));
    }

    @Override
    public String toString() {
      return "registration.folder=" + folder + ", poll.interval.millis=" + pollInterval.toMillis()
          + ", handshake.timeout.millis=" + handshakeTimeout.toMillis() + ", unreachable.withdraw.seconds="
          + withdrawAfter.getSeconds() + ", io.threads=" + ioThreads;
    }
  }

  /** The folder watch and the connections of one configuration. */
  private record Running(Transport transport, RegistrationWatcher watcher) {
    void close() {
      watcher.close();
      transport.close();
    }
  }

  private final Registry registry;
  private final LastGoodConfiguration<GrpcDraConfiguration, Settings> configuration;
  private final Gauge registered = Gauge.builder().name("nodelet_dra_grpc_registered_drivers")
      .help("External DRA drivers registered through the registration folder, by protocol: v1.DRAPlugin,"
          + " v1beta1.DRAPlugin or nodelet.dra.v1.").labelNames("protocol").withoutExemplars().build();
  private Running running; // guarded by this

  /** @throws IllegalArgumentException if the configuration is invalid, naming the key */
  @Activate
  public GrpcDraComponent(BundleContext context, GrpcDraConfiguration config) {
    this((driver, properties) -> {
      ServiceRegistration<DraDriver> registration = context.registerService(DraDriver.class, driver, properties);
      return () -> unregister(registration);
    }, config);
  }

  /** For tests: where the drivers go. */
  GrpcDraComponent(Registry registry, GrpcDraConfiguration config) {
    this.registry = registry;
    this.configuration = LastGoodConfiguration.activate(PID, "the external DRA driver registration", config,
        Settings::from);
    synchronized (this) {
      running = start(configuration.current());
    }
  }

  /** Applies a valid configuration, refuses an invalid one; never throws. */
  @Modified
  synchronized void modified(GrpcDraConfiguration config) {
    configuration.offer(config).ifPresent(next -> {
      // the drivers are withdrawn and register again through the new watch
      running.close();
      running = start(next);
    });
  }

  @Deactivate
  synchronized void deactivate() {
    running.close();
  }

  /** The configuration in force, for tests. */
  Settings settings() {
    return configuration.current();
  }

  private Running start(Settings settings) {
    Transport transport = new Transport(settings.ioThreads());
    Registrar registrar = new Registrar(transport, settings.handshakeTimeout());
    RegistrationWatcher watcher = new RegistrationWatcher(settings.folder(), settings.pollInterval(),
        settings.withdrawAfter(), registrar, (driver, socket) -> {
          Dictionary<String, Object> properties = new Hashtable<>();
          properties.put(DRIVER_NAME_PROPERTY, driver.driverName());
          properties.put(ENDPOINT_PROPERTY, driver.endpoint().toString());
          properties.put(REGISTRATION_PROPERTY, socket.toString());
          properties.put(PROTOCOL_PROPERTY, driver.protocol());
          Runnable unregister = registry.register(driver, properties);
          registered.labelValues(driver.protocol()).inc();
          return () -> {
            registered.labelValues(driver.protocol()).dec();
            unregister.run();
          };
        });
    watcher.start();
    return new Running(transport, watcher);
  }

  @Override
  public MetricSnapshots collect() {
    return MetricSnapshots.of(registered.collect());
  }

  private static void unregister(ServiceRegistration<?> registration) {
    try {
      registration.unregister();
    } catch (IllegalStateException e) {
      // unregistered already: the bundle is stopping
    }
  }
}
