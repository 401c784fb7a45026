package dev.nodelet.pods.internal;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The attributes a driver publishes for a device in its ResourceSlices, read from the API server once per device
 * for the life of the pods' runtime. A device no slice names, or an API server that cannot be reached then, gives no
 * attributes: the device is handed over without them rather than held back.
 */
interface DeviceAttributes {

  DeviceAttributes NONE = (driver, pool, device) -> Map.of();

  /** @return the device's attributes, name to Boolean, Long or String (a version as its string) */
  Map<String, Object> of(String driver, String pool, String device);

  /** Reads the slices of the API server, remembering each device's attributes. */
  final class FromSlices implements DeviceAttributes {

    private static final Logger LOG = LoggerFactory.getLogger(FromSlices.class);
    private final KubernetesClient client;
    private final Map<String, Map<String, Object>> known = new ConcurrentHashMap<>();

    FromSlices(KubernetesClient client) {
      this.client = client;
    }

    @Override
    public Map<String, Object> of(String driver, String pool, String device) {
      return known.computeIfAbsent(driver + "/" + pool + "/" + device, k -> read(driver, pool, device));
    }

    private Map<String, Object> read(String driver, String pool, String device) {
      try {
        for (ResourceSlice slice : client.resources(ResourceSlice.class).withField("spec.driver", driver).list()
            .getItems()) {
          if (slice.getSpec() == null || !driver.equals(slice.getSpec().getDriver())
              || slice.getSpec().getPool() == null || !pool.equals(slice.getSpec().getPool().getName())
              || slice.getSpec().getDevices() == null) {
            continue;
          }
          for (Device d : slice.getSpec().getDevices()) {
            if (device.equals(d.getName())) {
              return convert(d.getAttributes());
            }
          }
        }
      } catch (RuntimeException e) {
        LOG.info("The attributes of device {}/{}/{} cannot be read: {}", driver, pool, device, e.toString());
      }
      return Map.of();
    }

    private static Map<String, Object> convert(Map<String, DeviceAttribute> attributes) {
      Map<String, Object> out = new TreeMap<>();
      if (attributes != null) {
        attributes.forEach((name, a) -> {
          Object value = a.getBool() != null ? a.getBool() : a.getInt() != null ? a.getInt()
              : a.getString() != null ? a.getString() : a.getVersion();
          if (value != null) {
            out.put(name, value);
          }
        });
      }
      return Map.copyOf(out);
    }
  }
}
