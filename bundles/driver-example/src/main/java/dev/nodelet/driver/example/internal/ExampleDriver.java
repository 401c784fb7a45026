package dev.nodelet.driver.example.internal;

import dev.nodelet.configuration.ConfigurationValues;
import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.configuration.ServicePublisher;
import dev.nodelet.dra.ClaimPreparation;
import dev.nodelet.dra.ClaimRef;
import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.PrepareResult;
import dev.nodelet.dra.PreparedDevice;
import dev.nodelet.dra.SnapshotListener;
import dev.nodelet.dra.Subscription;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.osgi.annotation.bundle.Capability;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A DRA driver whose one pool of identical devices comes from a factory configuration of {@value #PID}.
 *
 * <p>A change of the configuration sends a new snapshot to every open subscription. A change that cannot be used
 * (a value out of range, a malformed entry, a new {@code driver.name}: the name is part of the service's identity)
 * is refused with an error naming the key, and the last good snapshot stays published; delete the configuration and
 * create a new one to rename a driver. With an invalid configuration from the start no driver service is registered
 * and readiness is held, naming the key, until the configuration is corrected ({@link LastGoodConfiguration}).
 * Names the API would refuse (a pool name, say) are the controller's to reject: it reports them in the driver's
 * status.
 *
 * <p>It also prepares claims: each allocated device of its pool gets the CDI device ID
 * {@code k8s.<driver>/device=<device>}; preparing again returns the same devices, and unpreparing forgets them.
 */
// the driver service is registered from code, once a valid configuration is in force: declared for resolvers
@Capability(namespace = "osgi.service",
    attribute = "objectClass:List<String>=\"dev.nodelet.dra.DeviceSnapshots,dev.nodelet.dra.ClaimPreparation\"")
@Component(configurationPid = ExampleDriver.PID, configurationPolicy = ConfigurationPolicy.REQUIRE,
    service = MultiCollector.class, immediate = true)
@Designate(ocd = ExampleDriverConfiguration.class, factory = true)
public final class ExampleDriver implements DeviceSnapshots, ClaimPreparation, MultiCollector {

  public static final String PID = "dev.nodelet.driver.example";

  /** Enough for any real node; far more would only fill memory. */
  static final int MAX_DEVICES = 10_000;

  private static final Logger LOG = LoggerFactory.getLogger(ExampleDriver.class);
  private static final Pattern INTEGER = Pattern.compile("-?\\d{1,18}");
  private static final Pattern VERSION = Pattern.compile("\\d+\\.\\d+\\.\\d+([-+][0-9A-Za-z.+-]*)?");

  private final String driverName;
  private final Set<SnapshotListener> listeners = new CopyOnWriteArraySet<>();
  private final LastGoodConfiguration<ExampleDriverConfiguration, Snapshot> configuration;
  private final Map<String, List<PreparedDevice>> prepared = new ConcurrentHashMap<>(); // by claim UID
  private final GaugeWithCallback devices = GaugeWithCallback.builder().name("nodelet_example_driver_devices")
      .help("Devices of the example driver's pool.").labelNames("driver")
      .callback(callback -> settings()
          .ifPresent(snapshot -> callback.call(snapshot.pools().get(0).devices().size(), driverName()))).build();
  private final GaugeWithCallback preparedClaims = GaugeWithCallback.builder()
      .name("nodelet_example_driver_prepared_claims").help("Claims the example driver holds prepared.")
      .labelNames("driver").callback(callback -> callback.call(prepared.size(), driverName())).build();

  @Activate
  public ExampleDriver(BundleContext context, ExampleDriverConfiguration config, Map<String, Object> properties) {
    this(ServicePublisher.of(context), config, properties);
  }

  /** For tests and plain Java: where the driver service and the health check of a waiting driver go. */
  ExampleDriver(ServicePublisher publisher, ExampleDriverConfiguration config, Map<String, Object> properties) {
    this.driverName = config.driver_name();
    // the PID of this factory configuration, e.g. dev.nodelet.driver.example~gpu, so that messages name it
    String pid = String.valueOf(properties.getOrDefault("service.pid", PID));
    this.configuration = LastGoodConfiguration.waiting(pid, "the example driver " + driverName, this::pools,
        publisher).publishing(this, Map.of(), DeviceSnapshots.class, ClaimPreparation.class);
    modified(config, properties);
  }

  /** Publishes a valid configuration, refuses an invalid one; never throws for an invalid one. */
  @Modified
  void modified(ExampleDriverConfiguration config, Map<String, Object> properties) {
    configuration.apply(config, properties, changed -> listeners.forEach(l -> l.onSnapshot(changed.pools())));
  }

  @Deactivate
  void deactivate() {
    configuration.close();
  }

  private Snapshot current() {
    return configuration.current();
  }

  /** The snapshot in force; empty while it waits for a valid configuration (its metrics are asked meanwhile). */
  private Optional<Snapshot> settings() {
    return configuration.settings();
  }

  /** Its metrics come and go with the driver, and with its bundle. */
  @Override
  public MetricSnapshots collect() {
    return MetricSnapshots.of(devices.collect(), preparedClaims.collect());
  }

  @Override
  public String driverName() {
    return driverName;
  }

  /** Sends the current snapshot at once; the stream stays open for configuration changes. */
  @Override
  public Subscription subscribe(SnapshotListener listener) {
    listeners.add(listener);
    listener.onSnapshot(current().pools());
    return () -> listeners.remove(listener);
  }

  /** Prepares the devices of its pool that the claims were allocated; a device it does not have fails the claim. */
  @Override
  public Map<String, PrepareResult> prepare(List<ClaimRef> claims) {
    Pool pool = current().pools().get(0);
    Set<String> names = new java.util.HashSet<>();
    pool.devices().forEach(d -> names.add(d.getName()));
    Map<String, PrepareResult> results = new HashMap<>();
    for (ClaimRef claim : claims) {
      List<PreparedDevice> devices = new ArrayList<>();
      String error = null;
      for (DeviceRequestAllocationResult r : claim.results()) {
        if (!pool.name().equals(r.getPool()) || !names.contains(r.getDevice())) {
          error = "device " + r.getPool() + "/" + r.getDevice() + " is not a device of pool " + pool.name();
          break;
        }
        devices.add(new PreparedDevice(List.of(r.getRequest()), r.getPool(), r.getDevice(),
            List.of("k8s." + driverName + "/device=" + r.getDevice()), null));
      }
      if (error != null) {
        results.put(claim.uid(), PrepareResult.failed(error));
      } else {
        prepared.put(claim.uid(), List.copyOf(devices));
        results.put(claim.uid(), PrepareResult.prepared(prepared.get(claim.uid())));
        LOG.info("Example driver {} prepared claim {}: {}", driverName, claim, devices.size());
      }
    }
    return results;
  }

  @Override
  public Map<String, String> unprepare(List<ClaimRef> claims) {
    claims.forEach(c -> prepared.remove(c.uid()));
    return Map.of();
  }

  /** What a configuration publishes; its text, for the log, names the pool and counts the devices. */
  record Snapshot(List<Pool> pools) {
    @Override
    public String toString() {
      return "pool " + pools.get(0).name() + " with " + pools.get(0).devices().size() + " devices";
    }
  }

  /** @throws IllegalArgumentException naming the key that is wrong and why */
  private Snapshot pools(ExampleDriverConfiguration config) {
    if (!driverName.equals(config.driver_name())) {
      throw new IllegalArgumentException("driver.name: cannot change from \"" + driverName + "\" to \""
          + config.driver_name() + "\"; create a new configuration instead");
    }
    int count = (int) ConfigurationValues.within("device.count", config::device_count, 0, MAX_DEVICES, "");
    if (config.pool() == null || config.pool().isBlank()) {
      throw new IllegalArgumentException("pool: must not be empty");
    }
    Map<String, DeviceAttribute> attributes = new LinkedHashMap<>();
    pairs("attributes", config.attributes()).forEach((name, value) -> attributes.put(name, attribute(value)));
    Map<String, DeviceCapacity> capacity = new LinkedHashMap<>();
    pairs("capacity", config.capacity()).forEach((name, value) -> capacity.put(name,
        new DeviceCapacity(null, quantity(name, value))));
    List<Device> devices = IntStream.range(0, count)
        .mapToObj(i -> new DeviceBuilder().withName("dev-" + i).withAttributes(attributes).withCapacity(capacity)
            .build())
        .toList();
    return new Snapshot(List.of(new Pool(config.pool(), devices)));
  }

  private static Quantity quantity(String name, String value) {
    try {
      Quantity quantity = new Quantity(value);
      quantity.getNumericalAmount(); // parses the amount, which the constructor leaves to later
      return quantity;
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("capacity: entry \"" + name + "=" + value + "\" is not a quantity such as "
          + "80Gi (" + e.getMessage() + ")");
    }
  }

  /**
   * The name=value pairs of a multi-valued key. A {@code .cfg} file gives one string, so each value may also hold
   * several pairs separated by commas: {@code attributes=model=xyz,gen=2} is two attributes.
   */
  static Map<String, String> pairs(String key, String[] values) {
    Map<String, String> pairs = new LinkedHashMap<>();
    List<String> entries = new ArrayList<>();
    for (String value : values == null ? new String[0] : values) {
      if (value != null && !value.isBlank()) {
        entries.addAll(Arrays.asList(value.split(",")));
      }
    }
    for (String entry : entries) {
      int eq = entry == null ? -1 : entry.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(key + ": entry \"" + entry + "\" is not name=value");
      }
      pairs.put(entry.substring(0, eq).trim(), entry.substring(eq + 1).trim());
    }
    return pairs;
  }

  private static DeviceAttribute attribute(String value) {
    if (value.equals("true") || value.equals("false")) {
      return new DeviceAttribute(Boolean.valueOf(value), null, null, null);
    }
    if (INTEGER.matcher(value).matches()) {
      return new DeviceAttribute(null, Long.valueOf(value), null, null);
    }
    if (VERSION.matcher(value).matches()) {
      return new DeviceAttribute(null, null, null, value);
    }
    return new DeviceAttribute(null, null, value, null);
  }
}
