package dev.nodelet.dra.grpc.internal;

import static dev.nodelet.configuration.ConfigurationValues.path;
import static dev.nodelet.configuration.ConfigurationValues.within;

import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.configuration.Running;
import dev.nodelet.configuration.ServicePublisher;
import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.RegistrationFailures;
import dev.nodelet.dra.grpc.PluginWatcher;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Registers a service for every external driver that registers through the folder, under the {@code dev.nodelet.dra}
 * roles the driver has (a kubelet plugin: ClaimPreparation, SelfPublishedSlices and, when it advertises health,
 * DeviceHealthSource; a Nodelet snapshot driver: DeviceSnapshots). Its configuration goes through
 * {@link LastGoodConfiguration}: a valid new one restarts the folder watch and the
 * connections in place (the drivers are withdrawn and registered again, which the controller's grace period
 * absorbs); an unchanged or invalid one leaves the drivers registered; with an invalid first one it watches nothing
 * and holds readiness until a valid one comes. The component is the {@link MultiCollector} of the registered
 * drivers' count, and the {@link RegistrationFailures} of the folder, which {@code nodelet:drivers} lists.
 */
@Component(configurationPid = GrpcDraComponent.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL,
    immediate = true, service = {MultiCollector.class, RegistrationFailures.class})
@Designate(ocd = GrpcDraConfiguration.class)
public final class GrpcDraComponent implements MultiCollector, RegistrationFailures {

  public static final String PID = "dev.nodelet.dra.grpc";
  /** Service properties of a registered driver, for the shell and for targeted references. */
  public static final String DRIVER_NAME_PROPERTY = "nodelet.dra.driver";
  public static final String ENDPOINT_PROPERTY = "nodelet.dra.grpc.endpoint";
  public static final String REGISTRATION_PROPERTY = "nodelet.dra.grpc.registration";
  /** The protocol chosen at registration: {@code v1.DRAPlugin}, {@code v1beta1.DRAPlugin} or {@code nodelet.dra.v1}. */
  public static final String PROTOCOL_PROPERTY = "nodelet.dra.grpc.protocol";

  /** The longest interval or timeout: a day. */
  static final long MAX_MILLIS = 24L * 60 * 60 * 1000;

  /** A validated configuration. */
  record Settings(Path folder, Duration pollInterval, Duration handshakeTimeout, Duration callTimeout,
      Duration withdrawAfter, int ioThreads) {

    /** @throws IllegalArgumentException naming the key that is wrong and why */
    static Settings from(GrpcDraConfiguration config) {
      return new Settings(path("registration.folder", config.registration_folder()),
          Duration.ofMillis(within("poll.interval.millis", config::poll_interval_millis, 10, MAX_MILLIS,
              "milliseconds")),
          Duration.ofMillis(within("handshake.timeout.millis", config::handshake_timeout_millis, 1, MAX_MILLIS,
              "milliseconds")),
          callTimeout(within("call.timeout.millis", config::call_timeout_millis, 0, MAX_MILLIS, "milliseconds")),
          Duration.ofSeconds(within("unreachable.withdraw.seconds", config::unreachable_withdraw_seconds, 0,
              MAX_MILLIS / 1000, "seconds")),
          (int) within("io.threads", config::io_threads, 1, PluginWatcher.MAX_IO_THREADS, ""));
    }

    /** 0 is the kubelet's default, as a registration that names no timeout gets it there. */
    static Duration callTimeout(long millis) {
      return millis == 0 ? PluginWatcher.DEFAULT_CALL_TIMEOUT : Duration.ofMillis(millis);
    }

    @Override
    public String toString() {
      return "registration.folder=" + folder + ", poll.interval.millis=" + pollInterval.toMillis()
          + ", handshake.timeout.millis=" + handshakeTimeout.toMillis() + ", call.timeout.millis="
          + callTimeout.toMillis() + ", unreachable.withdraw.seconds="
          + withdrawAfter.getSeconds() + ", io.threads=" + ioThreads;
    }
  }

  private final ServicePublisher publisher;
  private final LastGoodConfiguration<GrpcDraConfiguration, Settings> configuration;
  private final Gauge registered = Gauge.builder().name("nodelet_dra_grpc_registered_drivers")
      .help("External DRA drivers registered through the registration folder, by protocol: v1.DRAPlugin,"
          + " v1beta1.DRAPlugin or nodelet.dra.v1.").labelNames("protocol").withoutExemplars().build();
  /** The folder watch and the connections of the configuration in force; read without waiting for a restart. */
  private final Running<PluginWatcher> running = new Running<>();

  @Activate
  public GrpcDraComponent(BundleContext context, GrpcDraConfiguration config, Map<String, Object> properties) {
    this(ServicePublisher.of(context), config, properties);
  }

  /** For tests: where the drivers and the health check go. */
  GrpcDraComponent(ServicePublisher publisher, GrpcDraConfiguration config) {
    this(publisher, config, Map.of());
  }

  private GrpcDraComponent(ServicePublisher publisher, GrpcDraConfiguration config, Map<String, Object> properties) {
    this.publisher = publisher;
    this.configuration = LastGoodConfiguration.waiting(PID, "the external DRA drivers' registration",
        Settings::from, publisher).closing(running);
    modified(config, properties);
  }

  /** Applies a valid configuration, refuses an invalid one; never throws for an invalid one. */
  @Modified
  void modified(GrpcDraConfiguration config, Map<String, Object> properties) {
    synchronized (running) {
      configuration.apply(config, properties, next -> {
        // the drivers are withdrawn and register again through the new watch
        running.stop();
        running.replace(start(next));
      });
    }
  }

  /** Withdraws the health check, then the drivers, and ends every thread and connection. */
  @Deactivate
  void deactivate() {
    configuration.close();
  }

  /** The configuration in force, if any; for tests. */
  Optional<Settings> settings() {
    return configuration.settings();
  }

  private PluginWatcher start(Settings settings) {
    PluginWatcher watcher = PluginWatcher.builder(settings.folder()).pollInterval(settings.pollInterval())
        .handshakeTimeout(settings.handshakeTimeout()).callTimeout(settings.callTimeout())
        .withdrawUnreachableAfter(settings.withdrawAfter()).ioThreads(settings.ioThreads()).build();
    watcher.start(plugin -> {
      ServicePublisher.Registration registration = publisher.register(PluginWatch.roles(plugin),
          PluginWatch.service(plugin), Map.of(DRIVER_NAME_PROPERTY, plugin.driverName(),
              ENDPOINT_PROPERTY, plugin.endpoint().toString(),
              REGISTRATION_PROPERTY, plugin.registrationSocket().toString(),
              PROTOCOL_PROPERTY, plugin.protocol()));
      registered.labelValues(plugin.protocol()).inc();
      return () -> {
        registered.labelValues(plugin.protocol()).dec();
        registration.unregister();
      };
    });
    return watcher;
  }

  @Override
  public List<DriverStatus> failedRegistrations() {
    return running.ask(PluginWatcher::failedRegistrations, List.of());
  }

  @Override
  public MetricSnapshots collect() {
    return MetricSnapshots.of(registered.collect());
  }
}
