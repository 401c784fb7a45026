package dev.nodelet.dra.internal;

import dev.nodelet.dra.Pool;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Checks driver data against the validation rules of {@code resource.k8s.io/v1} before anything is written, so one
 * bad device yields an error naming the driver, the pool and the device instead of a rejected write.
 */
final class DriverDataValidator {

  static final int MAX_DRIVER_NAME_LENGTH = 63;
  static final int MAX_POOL_NAME_LENGTH = 253;
  static final int MAX_ATTRIBUTES_AND_CAPACITIES = 32;
  static final int MAX_TAINTS = 4;
  static final int MAX_ATTRIBUTE_VALUE_LENGTH = 64;
  static final int MAX_ID_LENGTH = 32;
  static final int MAX_COUNTERS_PER_SET = 32;
  static final int MAX_COUNTER_CONSUMPTIONS_PER_DEVICE = 2;
  static final int MAX_BINDING_CONDITIONS = 4;
  private static final int MAX_LABEL_LENGTH = 63;
  private static final int MAX_ERRORS = 10;
  private static final int MAX_CONDITION_TYPE_LENGTH = 316;
  // a qualified name, as metav1.Condition's type
  private static final Pattern CONDITION_TYPE = Pattern.compile(
      "([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
      + "[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");

  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern C_IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  // semver.org 2.0.0
  private static final Pattern SEMVER = Pattern.compile("(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)"
      + "(?:-((?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\\.(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
      + "(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?");

  private DriverDataValidator() {
  }

  /** Rejects a driver name that is not a DNS subdomain of at most 63 characters. */
  static void validateDriverName(String driverName) {
    if (driverName == null || driverName.isEmpty()) {
      throw new InvalidDriverDataException("a DRA driver service has no driver name");
    }
    if (driverName.length() > MAX_DRIVER_NAME_LENGTH || !DNS_SUBDOMAIN.matcher(driverName).matches()) {
      throw new InvalidDriverDataException("driver name \"" + driverName + "\" is not a DNS subdomain of at most "
          + MAX_DRIVER_NAME_LENGTH + " characters");
    }
  }

  /** Rejects a snapshot the API would not accept; the message lists up to ten problems, each with its place. */
  static void validate(String driverName, List<Pool> pools) {
    List<String> errors = new ArrayList<>();
    if (pools == null) {
      errors.add("the snapshot is null");
    } else {
      Set<String> poolNames = new HashSet<>();
      for (Pool pool : pools) {
        if (pool == null) {
          errors.add("a pool is null");
        } else {
          if (!poolNames.add(pool.name())) {
            errors.add("pool \"" + pool.name() + "\": more than one pool has this name");
          }
          validatePool(pool, errors);
        }
      }
    }
    if (!errors.isEmpty()) {
      String shown = String.join("; ", errors.subList(0, Math.min(MAX_ERRORS, errors.size())));
      String more = errors.size() > MAX_ERRORS ? "; and " + (errors.size() - MAX_ERRORS) + " more" : "";
      throw new InvalidDriverDataException("driver \"" + driverName + "\" reported invalid resources: " + shown
          + more);
    }
  }

  private static void validatePool(Pool pool, List<String> errors) {
    String where = "pool \"" + pool.name() + "\"";
    if (pool.name().isEmpty() || pool.name().length() > MAX_POOL_NAME_LENGTH
        || !Stream.of(pool.name().split("/", -1)).allMatch(DriverDataValidator::isDnsSubdomain)) {
      errors.add(where + ": the name must be DNS subdomains separated by \"/\", at most " + MAX_POOL_NAME_LENGTH
          + " characters");
    }
    Map<String, Set<String>> counterSets = new HashMap<>();
    for (CounterSet set : pool.sharedCounters()) {
      validateCounterSet(set, where, counterSets, errors);
    }
    Set<String> deviceNames = new HashSet<>();
    for (Device device : pool.devices()) {
      if (device == null) {
        errors.add(where + ": a device is null");
        continue;
      }
      String name = device.getName();
      String at = where + ": device \"" + name + "\"";
      if (name == null || name.length() > MAX_LABEL_LENGTH || !DNS_LABEL.matcher(name).matches()) {
        errors.add(at + ": the name must be a DNS label (lower case letters, digits and '-', at most "
            + MAX_LABEL_LENGTH + " characters)");
      } else if (!deviceNames.add(name)) {
        errors.add(at + ": duplicate device name in the pool");
      }
      validateDevice(device, at, errors);
      validateConsumesCounters(device, at, counterSets, errors);
    }
  }

  private static void validateCounterSet(CounterSet set, String where, Map<String, Set<String>> counterSets,
      List<String> errors) {
    if (set == null) {
      errors.add(where + ": a sharedCounters entry is null");
      return;
    }
    String at = where + ": sharedCounters \"" + set.getName() + "\"";
    if (!isDnsLabel(set.getName())) {
      errors.add(at + ": the name must be a DNS label");
    } else if (counterSets.containsKey(set.getName())) {
      errors.add(at + ": more than one counter set of the pool has this name");
    }
    Map<String, Counter> counters = nonNull(set.getCounters());
    if (counters.isEmpty() || counters.size() > MAX_COUNTERS_PER_SET) {
      errors.add(at + ": counters must hold 1 to " + MAX_COUNTERS_PER_SET + " counters, it holds "
          + counters.size());
    }
    checkCounters(counters, at, errors);
    counterSets.putIfAbsent(set.getName(), counters.keySet());
  }

  private static void validateConsumesCounters(Device device, String at, Map<String, Set<String>> counterSets,
      List<String> errors) {
    List<DeviceCounterConsumption> consumptions = device.getConsumesCounters();
    if (consumptions == null) {
      return;
    }
    if (consumptions.size() > MAX_COUNTER_CONSUMPTIONS_PER_DEVICE) {
      errors.add(at + ": consumesCounters has " + consumptions.size() + " entries, at most "
          + MAX_COUNTER_CONSUMPTIONS_PER_DEVICE + " are allowed");
    }
    for (DeviceCounterConsumption consumption : consumptions) {
      if (consumption == null) {
        errors.add(at + ": a consumesCounters entry is null");
        continue;
      }
      String set = consumption.getCounterSet();
      String where = at + ": consumesCounters \"" + set + "\"";
      Set<String> known = counterSets.get(set);
      if (known == null) {
        errors.add(where + ": no counter set of this name in the pool's sharedCounters");
        continue;
      }
      Map<String, Counter> counters = nonNull(consumption.getCounters());
      if (counters.isEmpty() || counters.size() > MAX_COUNTERS_PER_SET) {
        errors.add(where + ": counters must hold 1 to " + MAX_COUNTERS_PER_SET + " counters, it holds "
            + counters.size());
      }
      checkCounters(counters, where, errors);
      counters.keySet().stream().filter(c -> !known.contains(c)).sorted().forEach(c ->
          errors.add(where + ": counter \"" + c + "\" is not in that counter set"));
    }
  }

  private static void checkCounters(Map<String, Counter> counters, String at, List<String> errors) {
    counters.forEach((key, value) -> {
      if (!isDnsLabel(key)) {
        errors.add(at + ": counter name \"" + key + "\" must be a DNS label");
      }
      if (value == null || value.getValue() == null) {
        errors.add(at + ": counter \"" + key + "\" has no value");
      }
    });
  }

  private static void validateDevice(Device device, String at, List<String> errors) {
    Map<String, DeviceAttribute> attributes = nonNull(device.getAttributes());
    Map<String, DeviceCapacity> capacity = nonNull(device.getCapacity());
    if (attributes.size() + capacity.size() > MAX_ATTRIBUTES_AND_CAPACITIES) {
      errors.add(at + ": " + (attributes.size() + capacity.size()) + " attributes and capacities, at most "
          + MAX_ATTRIBUTES_AND_CAPACITIES + " are allowed");
    }
    attributes.forEach((key, value) -> {
      checkQualifiedName(key, at + ": attribute", errors);
      checkAttribute(value, at + ": attribute \"" + key + "\"", errors);
    });
    capacity.forEach((key, value) -> {
      checkQualifiedName(key, at + ": capacity", errors);
      if (value == null || value.getValue() == null) {
        errors.add(at + ": capacity \"" + key + "\" has no value");
      }
    });
    if (device.getNodeName() != null || device.getNodeSelector() != null || device.getAllNodes() != null) {
      errors.add(at + ": nodeName, nodeSelector and allNodes must not be set (the device belongs to this node)");
    }
    checkConditions(device.getBindingConditions(), at + ": bindingConditions", errors);
    checkConditions(device.getBindingFailureConditions(), at + ": bindingFailureConditions", errors);
    boolean conditions = device.getBindingConditions() != null && !device.getBindingConditions().isEmpty();
    boolean failures = device.getBindingFailureConditions() != null
        && !device.getBindingFailureConditions().isEmpty();
    if (conditions != failures) {
      errors.add(at + ": bindingConditions and bindingFailureConditions must be set together");
    } else if (conditions && device.getBindingFailureConditions().stream()
        .anyMatch(device.getBindingConditions()::contains)) {
      errors.add(at + ": bindingFailureConditions must not repeat an entry of bindingConditions");
    }
    if (device.getTaints() != null && device.getTaints().size() > MAX_TAINTS) {
      errors.add(at + ": " + device.getTaints().size() + " taints, at most " + MAX_TAINTS + " are allowed");
    }
  }

  private static void checkQualifiedName(String key, String what, List<String> errors) {
    int slash = key == null ? -1 : key.indexOf('/');
    String domain = slash < 0 ? null : key.substring(0, slash);
    String id = slash < 0 ? key : key.substring(slash + 1);
    boolean domainOk = domain == null || (domain.length() <= MAX_LABEL_LENGTH && isDnsSubdomain(domain));
    boolean idOk = id != null && id.length() <= MAX_ID_LENGTH && C_IDENTIFIER.matcher(id).matches();
    if (!domainOk || !idOk) {
      errors.add(what + " name \"" + key + "\" must be an identifier (letters, digits, '_', at most "
          + MAX_ID_LENGTH + " characters), optionally prefixed by a DNS subdomain and '/'");
    }
  }

  private static void checkAttribute(DeviceAttribute value, String at, List<String> errors) {
    if (value == null) {
      errors.add(at + " has no value");
      return;
    }
    long set = Stream.of(value.getBool(), value.getInt(), value.getString(), value.getVersion())
        .filter(v -> v != null).count();
    if (set != 1) {
      errors.add(at + ": exactly one of bool, int, string and version must be set, " + set + " are");
    } else if (value.getString() != null && value.getString().length() > MAX_ATTRIBUTE_VALUE_LENGTH) {
      errors.add(at + ": the string is longer than " + MAX_ATTRIBUTE_VALUE_LENGTH + " characters");
    } else if (value.getVersion() != null && (value.getVersion().length() > MAX_ATTRIBUTE_VALUE_LENGTH
        || !SEMVER.matcher(value.getVersion()).matches())) {
      errors.add(at + ": the version must be a semantic version of at most " + MAX_ATTRIBUTE_VALUE_LENGTH
          + " characters");
    }
  }

  private static void checkConditions(List<String> conditions, String at, List<String> errors) {
    if (conditions == null) {
      return;
    }
    if (conditions.size() > MAX_BINDING_CONDITIONS) {
      errors.add(at + ": " + conditions.size() + " entries, at most " + MAX_BINDING_CONDITIONS + " are allowed");
    }
    conditions.stream().filter(c -> c == null || c.isEmpty() || c.length() > MAX_CONDITION_TYPE_LENGTH
        || !CONDITION_TYPE.matcher(c).matches()).forEach(c ->
        errors.add(at + ": \"" + c + "\" is not a condition type ([domain/]name, at most "
            + MAX_CONDITION_TYPE_LENGTH + " characters)"));
  }

  private static boolean isDnsLabel(String s) {
    return s != null && s.length() <= MAX_LABEL_LENGTH && DNS_LABEL.matcher(s).matches();
  }

  private static boolean isDnsSubdomain(String s) {
    return !s.isEmpty() && s.length() <= MAX_POOL_NAME_LENGTH && DNS_SUBDOMAIN.matcher(s).matches();
  }

  private static <K, V> Map<K, V> nonNull(Map<K, V> map) {
    return map == null ? Map.of() : map;
  }
}
