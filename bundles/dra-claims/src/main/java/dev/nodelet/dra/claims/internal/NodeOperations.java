package dev.nodelet.dra.claims.internal;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * KEP-5945 (DRAOptionalNodeOperations): a driver's ResourceSlice may list {@code spec.skipNodeOperations}, which the
 * scheduler copies into each allocation result; when every result of a driver in a claim skips an operation, the
 * driver is neither looked up nor called for it. fabric8 7.5.2 has no such field, so it is read from the result's
 * additional properties. Values: {@code NodePrepareResources}, {@code NodeUnprepareResources}, {@code *} (both);
 * others are ignored, as the kubelet must.
 */
final class NodeOperations {

  static final String PREPARE = "NodePrepareResources";
  static final String UNPREPARE = "NodeUnprepareResources";
  static final String FIELD = "skipNodeOperations";

  private NodeOperations() {
  }

  /** The operations one result skips, {@code *} expanded; unknown values left out. */
  static Set<String> of(DeviceRequestAllocationResult result) {
    Set<String> out = new TreeSet<>();
    Object value = result.getAdditionalProperties() == null ? null : result.getAdditionalProperties().get(FIELD);
    if (value instanceof Collection<?> values) {
      for (Object v : values) {
        if ("*".equals(v)) {
          out.add(PREPARE);
          out.add(UNPREPARE);
        } else if (PREPARE.equals(v) || UNPREPARE.equals(v)) {
          out.add((String) v);
        }
      }
    }
    return out;
  }

  /** The operations every result of the driver skips (none when it has no result). */
  static Set<String> skippedBy(String driver, List<DeviceRequestAllocationResult> results) {
    Set<String> common = null;
    for (DeviceRequestAllocationResult r : results) {
      if (driver.equals(r.getDriver())) {
        Set<String> ops = of(r);
        if (common == null) {
          common = ops;
        } else {
          common.retainAll(ops);
        }
      }
    }
    return common == null ? Set.of() : Set.copyOf(common);
  }

  /** Some result asks to skip an operation the claim manager knows. */
  static boolean anyAsked(List<DeviceRequestAllocationResult> results) {
    return results.stream().anyMatch(r -> !of(r).isEmpty());
  }
}
