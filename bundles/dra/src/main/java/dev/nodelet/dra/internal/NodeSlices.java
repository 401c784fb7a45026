package dev.nodelet.dra.internal;

import dev.nodelet.dra.SliceSummary;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What the controller writes into a ResourceSlice and reads from one: its driver, and whether the controller owns
 * it. A slice the controller creates carries the label {@value #MANAGED_BY}={@value #NODELET}; only such slices are
 * ever updated or deleted for a driver the controller publishes. Every other slice of the node (a kubelet plugin's
 * own, say, which carries the same Node owner reference) is left alone, whenever its driver registers.
 */
final class NodeSlices {

  /** The well-known label of the tool that manages an object. */
  static final String MANAGED_BY = "app.kubernetes.io/managed-by";
  static final String NODELET = "nodelet";

  private NodeSlices() {
  }

  /** Whether the controller created the slice. */
  static boolean owned(ResourceSlice slice) {
    Map<String, String> labels = slice.getMetadata() == null ? null : slice.getMetadata().getLabels();
    return labels != null && NODELET.equals(labels.get(MANAGED_BY));
  }

  static String driverOf(ResourceSlice slice) {
    return slice.getSpec() == null ? "" : Objects.requireNonNullElse(slice.getSpec().getDriver(), "");
  }

  /** A new slice of this node, owned by its Node (so it goes with it) and labelled as the controller's. */
  static ResourceSlice newSlice(String nodeName, String nodeUid, String driver, ResourceSliceSpec spec) {
    return new ResourceSliceBuilder()
        .withNewMetadata()
        .withGenerateName(nodeName + "-" + driver + "-")
        .addToLabels(MANAGED_BY, NODELET)
        .addNewOwnerReference()
        .withApiVersion("v1").withKind("Node").withName(nodeName).withUid(nodeUid).withController(true)
        .endOwnerReference()
        .endMetadata()
        .withSpec(spec)
        .build();
  }

  /** The slices as the shell shows them, ordered by driver, pool and name. */
  static List<SliceSummary> summaries(List<ResourceSlice> slices) {
    return slices.stream().map(NodeSlices::summary)
        .sorted(Comparator.comparing(SliceSummary::driver).thenComparing(SliceSummary::pool)
            .thenComparing(SliceSummary::name))
        .toList();
  }

  private static SliceSummary summary(ResourceSlice slice) {
    ResourceSliceSpec spec = slice.getSpec();
    var pool = spec == null ? null : spec.getPool();
    return new SliceSummary(slice.getMetadata().getName(), driverOf(slice),
        pool == null || pool.getName() == null ? "" : pool.getName(),
        pool == null || pool.getGeneration() == null ? 0 : pool.getGeneration(),
        spec == null || spec.getDevices() == null ? 0 : spec.getDevices().size());
  }
}
