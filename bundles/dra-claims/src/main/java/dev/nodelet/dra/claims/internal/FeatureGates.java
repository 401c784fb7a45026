package dev.nodelet.dra.claims.internal;

import java.util.Map;
import java.util.TreeMap;

/**
 * The Kubernetes feature gates that change what the claim manager does, with the defaults of Kubernetes 1.36.
 *
 * @param values every known gate and whether it is on
 */
public record FeatureGates(Map<String, Boolean> values) {

  /** Claims reserved for the pod's PodGroup ({@code spec.schedulingGroup.podGroupName}); alpha, off. */
  public static final String WORKLOAD_RESOURCE_CLAIMS = "DRAWorkloadResourceClaims";
  /** Extended resources backed by DRA ({@code status.extendedResourceClaimStatus}); beta, on. */
  public static final String EXTENDED_RESOURCE = "DRAExtendedResource";

  /**
   * Drivers that need no node operations ({@code skipNodeOperations} of their ResourceSlice, copied into the
   * allocation results); alpha in 1.37, off.
   */
  public static final String OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations";

  /** The defaults of Kubernetes 1.36, and of 1.37 for gates it added. */
  public static final Map<String, Boolean> DEFAULTS = Map.of(WORKLOAD_RESOURCE_CLAIMS, false, EXTENDED_RESOURCE,
      true, OPTIONAL_NODE_OPERATIONS, false);

  public FeatureGates {
    values = Map.copyOf(values);
  }

  public static FeatureGates defaults() {
    return new FeatureGates(DEFAULTS);
  }

  /**
   * These gates set over the current values.
   *
   * @throws IllegalArgumentException naming a gate that the claim manager does not know
   */
  public FeatureGates with(Map<String, Boolean> changes) {
    Map<String, Boolean> next = new TreeMap<>(values);
    changes.forEach((name, on) -> {
      if (!DEFAULTS.containsKey(name)) {
        throw new IllegalArgumentException("unknown feature gate " + name + "; known: "
            + String.join(", ", new TreeMap<>(DEFAULTS).keySet()));
      }
      if (on == null) {
        throw new IllegalArgumentException("feature gate " + name + " needs true or false, was null");
      }
      next.put(name, on);
    });
    return new FeatureGates(next);
  }

  public boolean enabled(String gate) {
    return values.getOrDefault(gate, false);
  }

  /**
   * Parses {@code Name=true,Other=false} (the kubelet's {@code --feature-gates} syntax); blank: no change.
   *
   * @throws IllegalArgumentException naming the key and what is wrong
   */
  public static Map<String, Boolean> parse(String key, String text) {
    Map<String, Boolean> out = new TreeMap<>();
    if (text == null || text.isBlank()) {
      return out;
    }
    for (String item : text.split(",")) {
      String part = item.trim();
      int eq = part.indexOf('=');
      String value = eq < 0 ? "" : part.substring(eq + 1).trim();
      if (eq <= 0 || !(value.equalsIgnoreCase("true") || value.equalsIgnoreCase("false"))) {
        throw new IllegalArgumentException(key + ": expected Name=true or Name=false, separated by commas, was \""
            + part + "\"");
      }
      String name = part.substring(0, eq).trim();
      if (!DEFAULTS.containsKey(name)) {
        throw new IllegalArgumentException(key + ": unknown feature gate " + name + "; known: "
            + String.join(", ", new TreeMap<>(DEFAULTS).keySet()));
      }
      out.put(name, Boolean.parseBoolean(value.toLowerCase(java.util.Locale.ROOT)));
    }
    return out;
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder();
    new TreeMap<>(values).forEach((k, v) -> s.append(s.length() == 0 ? "" : ",").append(k).append('=').append(v));
    return s.toString();
  }
}
