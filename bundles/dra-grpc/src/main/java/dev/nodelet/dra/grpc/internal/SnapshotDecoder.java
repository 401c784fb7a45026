package dev.nodelet.dra.grpc.internal;

import dev.nodelet.dra.Pool;
import dev.nodelet.dra.grpc.v1.ListAndWatchResourcesResponse;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSetBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaintBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns a snapshot message into pools of fabric8 v1 devices. It rejects only what cannot be represented at all (a
 * pool without a name, an attribute without a value, a capacity that is not a quantity); names, duplicates and
 * limits are the controller's to check, with the same rules as for in-process drivers.
 */
final class SnapshotDecoder {

  private SnapshotDecoder() {
  }

  /** @throws IllegalArgumentException naming the pool, device and field at fault */
  static List<Pool> decode(ListAndWatchResourcesResponse response) {
    List<Pool> pools = new ArrayList<>(response.getPoolsCount());
    for (int p = 0; p < response.getPoolsCount(); p++) {
      var pool = response.getPools(p);
      if (pool.getName().isEmpty()) {
        throw new IllegalArgumentException("pool #" + p + " has no name");
      }
      List<Device> devices = new ArrayList<>(pool.getDevicesCount());
      for (var device : pool.getDevicesList()) {
        devices.add(device(pool.getName(), device));
      }
      List<CounterSet> counterSets = new ArrayList<>(pool.getSharedCountersCount());
      for (var set : pool.getSharedCountersList()) {
        counterSets.add(new CounterSetBuilder().withName(set.getName())
            .withCounters(counters("counter set \"" + set.getName() + "\" of pool \"" + pool.getName() + "\"",
                set.getCountersMap()))
            .build());
      }
      pools.add(new Pool(pool.getName(), devices, counterSets));
    }
    return pools;
  }

  private static Device device(String pool, dev.nodelet.dra.grpc.v1.Device device) {
    String where = "device \"" + device.getName() + "\" of pool \"" + pool + "\"";
    Map<String, DeviceAttribute> attributes = new LinkedHashMap<>();
    device.getAttributesMap().forEach((name, value) -> attributes.put(name, switch (value.getValueCase()) {
      case BOOL_VALUE -> new DeviceAttribute(value.getBoolValue(), null, null, null);
      case INT_VALUE -> new DeviceAttribute(null, value.getIntValue(), null, null);
      case STRING_VALUE -> new DeviceAttribute(null, null, value.getStringValue(), null);
      case VERSION_VALUE -> new DeviceAttribute(null, null, null, value.getVersionValue());
      case VALUE_NOT_SET -> throw new IllegalArgumentException(where + ": attribute \"" + name + "\" has no value");
    }));
    Map<String, DeviceCapacity> capacity = new LinkedHashMap<>();
    device.getCapacityMap().forEach((name, value) ->
        capacity.put(name, new DeviceCapacity(null, quantity(where + ": capacity \"" + name + "\"", value))));
    return new DeviceBuilder().withName(device.getName())
        .withAttributes(attributes.isEmpty() ? null : attributes)
        .withCapacity(capacity.isEmpty() ? null : capacity)
        .withConsumesCounters(device.getConsumesCountersCount() == 0 ? null : device.getConsumesCountersList()
            .stream().map(c -> new DeviceCounterConsumption(c.getCounterSet(),
                counters(where + ": consumesCounters \"" + c.getCounterSet() + "\"", c.getCountersMap())))
            .toList())
        .withTaints(device.getTaintsCount() == 0 ? null : device.getTaintsList().stream()
            .map(t -> new DeviceTaintBuilder().withKey(t.getKey()).withValue(t.getValue().isEmpty() ? null
                : t.getValue()).withEffect(t.getEffect()).build()).toList())
        .withBindingConditions(device.getBindingConditionsCount() == 0 ? null : device.getBindingConditionsList())
        .withBindingFailureConditions(device.getBindingFailureConditionsCount() == 0 ? null
            : device.getBindingFailureConditionsList())
        .withBindsToNode(device.hasBindsToNode() ? device.getBindsToNode() : null)
        .build();
  }

  private static Map<String, Counter> counters(String where, Map<String, String> values) {
    Map<String, Counter> counters = new LinkedHashMap<>();
    values.forEach((name, value) -> counters.put(name, new Counter(quantity(where + ": counter \"" + name + "\"",
        value))));
    return counters;
  }

  private static Quantity quantity(String what, String value) {
    try {
      Quantity quantity = Quantity.parse(value);
      Quantity.getAmountInBytes(quantity); // parse accepts anything; this is where a bad number fails
      return quantity;
    } catch (IllegalArgumentException | ArithmeticException e) {
      throw new IllegalArgumentException(what + " is not a quantity: \"" + value + "\"", e);
    }
  }
}
