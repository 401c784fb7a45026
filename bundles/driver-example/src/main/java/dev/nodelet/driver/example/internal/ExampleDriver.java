package dev.nodelet.driver.example.internal;

import dev.nodelet.dra.DraDriver;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.SnapshotListener;
import dev.nodelet.dra.Subscription;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.metatype.annotations.Designate;

/**
 * A DRA driver whose one pool of identical devices comes from a factory configuration of {@value #PID}.
 *
 * <p>A change of the configuration sends a new snapshot to every open subscription. The driver name is part of the
 * service's identity, so a changed {@code driver.name} is refused in {@link #modified}: SCR then logs the error;
 * delete the configuration and create a new one to rename a driver.
 */
@Component(configurationPid = ExampleDriver.PID, configurationPolicy = ConfigurationPolicy.REQUIRE,
    service = DraDriver.class)
@Designate(ocd = ExampleDriverConfiguration.class, factory = true)
public final class ExampleDriver implements DraDriver {

  public static final String PID = "dev.nodelet.driver.example";

  private static final Pattern INTEGER = Pattern.compile("-?\\d{1,18}");
  private static final Pattern VERSION = Pattern.compile("\\d+\\.\\d+\\.\\d+([-+][0-9A-Za-z.+-]*)?");

  private final String driverName;
  private final Set<SnapshotListener> listeners = new CopyOnWriteArraySet<>();
  private volatile List<Pool> pools;

  @Activate
  public ExampleDriver(ExampleDriverConfiguration config) {
    this.driverName = config.driver_name();
    this.pools = pools(config);
  }

  @Modified
  void modified(ExampleDriverConfiguration config) {
    if (!driverName.equals(config.driver_name())) {
      throw new IllegalArgumentException("driver.name cannot change from \"" + driverName + "\" to \""
          + config.driver_name() + "\"; create a new configuration instead");
    }
    List<Pool> changed = pools(config);
    pools = changed;
    listeners.forEach(l -> l.onSnapshot(changed));
  }

  @Override
  public String driverName() {
    return driverName;
  }

  /** Sends the current snapshot at once; the stream stays open for configuration changes. */
  @Override
  public Subscription subscribe(SnapshotListener listener) {
    listeners.add(listener);
    listener.onSnapshot(pools);
    return () -> listeners.remove(listener);
  }

  private static List<Pool> pools(ExampleDriverConfiguration config) {
    if (config.device_count() < 0) {
      throw new IllegalArgumentException("device.count must not be negative, was " + config.device_count());
    }
    Map<String, DeviceAttribute> attributes = new LinkedHashMap<>();
    pairs("attributes", config.attributes()).forEach((name, value) -> attributes.put(name, attribute(value)));
    Map<String, DeviceCapacity> capacity = new LinkedHashMap<>();
    pairs("capacity", config.capacity()).forEach((name, value) -> capacity.put(name,
        new DeviceCapacity(null, new Quantity(value))));
    List<Device> devices = IntStream.range(0, config.device_count())
        .mapToObj(i -> new DeviceBuilder().withName("dev-" + i).withAttributes(attributes).withCapacity(capacity)
            .build())
        .toList();
    return List.of(new Pool(config.pool(), devices));
  }

  private static Map<String, String> pairs(String key, String[] entries) {
    Map<String, String> pairs = new LinkedHashMap<>();
    for (String entry : entries == null ? new String[0] : entries) {
      int eq = entry.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(key + " entry \"" + entry + "\" is not name=value");
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
