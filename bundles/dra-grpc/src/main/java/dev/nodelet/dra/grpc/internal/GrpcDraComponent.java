package dev.nodelet.dra.grpc.internal;

import dev.nodelet.dra.DraDriver;
import io.prometheus.metrics.core.metrics.Gauge;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
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
import org.osgi.service.metatype.annotations.Designate;

/**
 * Registers a {@link DraDriver} service for every external driver that registers through the folder. A configuration
 * change re-activates the component: the drivers are withdrawn and registered again, which the controller's grace
 * period absorbs. The component is the {@link MultiCollector} of the registered drivers' count.
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

  private final Transport transport;
  private final RegistrationWatcher watcher;
  private final Gauge registered = Gauge.builder().name("nodelet_dra_grpc_registered_drivers")
      .help("External DRA drivers registered through the registration folder, by protocol: v1.DRAPlugin,"
          + " v1beta1.DRAPlugin or nodelet.dra.v1.").labelNames("protocol").withoutExemplars().build();

  @Activate
  public GrpcDraComponent(BundleContext context, GrpcDraConfiguration config) {
    transport = new Transport(config.io_threads());
    Registrar registrar = new Registrar(transport, Duration.ofMillis(config.handshake_timeout_millis()));
    watcher = new RegistrationWatcher(Path.of(config.registration_folder()),
        Duration.ofMillis(config.poll_interval_millis()), withdrawAfter(config), registrar, (driver, socket) -> {
          Dictionary<String, Object> properties = new Hashtable<>();
          properties.put(DRIVER_NAME_PROPERTY, driver.driverName());
          properties.put(ENDPOINT_PROPERTY, driver.endpoint().toString());
          properties.put(REGISTRATION_PROPERTY, socket.toString());
          properties.put(PROTOCOL_PROPERTY, driver.protocol());
          ServiceRegistration<DraDriver> registration = context.registerService(DraDriver.class, driver, properties);
          registered.labelValues(driver.protocol()).inc();
          return () -> {
            registered.labelValues(driver.protocol()).dec();
            unregister(registration);
          };
        });
    watcher.start();
  }

  private static Duration withdrawAfter(GrpcDraConfiguration config) {
    long seconds = config.unreachable_withdraw_seconds();
    if (seconds < 0) {
      throw new IllegalArgumentException("unreachable.withdraw.seconds: must be 0 (never) or more, was " + seconds);
    }
    return Duration.ofSeconds(seconds);
  }

  @Override
  public MetricSnapshots collect() {
    return MetricSnapshots.of(registered.collect());
  }

  @Deactivate
  void deactivate() {
    watcher.close();
    transport.close();
  }

  private static void unregister(ServiceRegistration<?> registration) {
    try {
      registration.unregister();
    } catch (IllegalStateException e) {
      // unregistered already: the bundle is stopping
    }
  }
}
