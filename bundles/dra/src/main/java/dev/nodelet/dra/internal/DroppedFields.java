package dev.nodelet.dra.internal;

import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * Finds the fields an API server dropped from a written ResourceSlice because a feature gate is off: a
 * kube-apiserver stores such an object without them and says nothing, so the written and the stored slice differ
 * and every later sync would write again.
 */
final class DroppedFields {

  private record Field(String path, String gate, Function<ResourceSliceSpec, Boolean> present) {
  }

  private static final List<Field> FIELDS = List.of(
      new Field("spec.sharedCounters", "DRAPartitionableDevices", s -> !empty(s.getSharedCounters())),
      new Field("spec.devices[].consumesCounters", "DRAPartitionableDevices",
          s -> anyDevice(s, d -> !empty(d.getConsumesCounters()))),
      new Field("spec.devices[].taints", "DRADeviceTaints", s -> anyDevice(s, d -> !empty(d.getTaints()))),
      new Field("spec.devices[].bindingConditions", "DRADeviceBindingConditions",
          s -> anyDevice(s, d -> !empty(d.getBindingConditions()))),
      new Field("spec.devices[].bindingFailureConditions", "DRADeviceBindingConditions",
          s -> anyDevice(s, d -> !empty(d.getBindingFailureConditions()))),
      new Field("spec.devices[].bindsToNode", "DRADeviceBindingConditions",
          s -> anyDevice(s, d -> d.getBindsToNode() != null)));

  private DroppedFields() {
  }

  /**
   * The problem, naming fields and feature gates, or {@code null} when the server kept every gated field that was
   * written.
   */
  static String check(String sliceName, ResourceSliceSpec written, ResourceSliceSpec stored) {
    Set<String> paths = new LinkedHashSet<>();
    Set<String> gates = new LinkedHashSet<>();
    for (Field field : FIELDS) {
      if (field.present().apply(written) && (stored == null || !field.present().apply(stored))) {
        paths.add(field.path());
        gates.add(field.gate());
      }
    }
    if (paths.isEmpty()) {
      return null;
    }
    return "the API server dropped " + String.join(", ", paths) + " from ResourceSlice " + sliceName
        + ": enable the feature gate" + (gates.size() > 1 ? "s " : " ") + String.join(", ", gates)
        + " on the kube-apiserver, or have the driver not report " + (paths.size() > 1 ? "these fields" : "it")
        + "; nothing more is written for this driver until it reports something else or the controller restarts";
  }

  private static boolean anyDevice(ResourceSliceSpec spec, Function<Device, Boolean> test) {
    return spec.getDevices() != null && spec.getDevices().stream().filter(Objects::nonNull).anyMatch(test::apply);
  }

  private static boolean empty(Collection<?> c) {
    return c == null || c.isEmpty();
  }
}
