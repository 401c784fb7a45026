package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The kubelet's admission of cpu/memory requests and of node selectors and required node affinity. */
class NodeFitTest {

  private static final Node NODE = new NodeBuilder().withNewMetadata().withName("node-1")
      .withLabels(Map.of("kubernetes.io/os", "linux", "zone", "a", "gpus", "4")).endMetadata()
      .withNewStatus().withAllocatable(Map.of("cpu", new Quantity("2"), "memory", new Quantity("1Gi"),
          "pods", new Quantity("110"))).endStatus().build();

  private static Pod pod(String cpu, String memory) {
    Map<String, Quantity> requests = new java.util.HashMap<>();
    if (cpu != null) {
      requests.put("cpu", new Quantity(cpu));
    }
    if (memory != null) {
      requests.put("memory", new Quantity(memory));
    }
    return new PodBuilder().withNewMetadata().withName("p").endMetadata().withNewSpec().addNewContainer()
        .withName("c").withNewResources().withRequests(requests).endResources().endContainer().endSpec().build();
  }

  private static Pod withAffinity(NodeSelectorTerm... terms) {
    return new PodBuilder().withNewMetadata().withName("p").endMetadata().withNewSpec().addNewContainer()
        .withName("c").endContainer().withNewAffinity().withNewNodeAffinity()
        .withNewRequiredDuringSchedulingIgnoredDuringExecution().withNodeSelectorTerms(terms)
        .endRequiredDuringSchedulingIgnoredDuringExecution().endNodeAffinity().endAffinity().endSpec().build();
  }

  private static NodeSelectorTerm term(String key, String operator, String... values) {
    return new NodeSelectorTerm(List.of(new NodeSelectorRequirement(key, operator, List.of(values))), null);
  }

  @Test
  void cpuBeyondWhatTheNodeLeavesIsOutOfcpuWithTheKubeletsMessage() {
    assertThat(Admission.admit(pod("1500m", null), List.of(pod("500m", null)), 110, NODE)).isEmpty();
    var rejection = Admission.admit(pod("1500m", null), List.of(pod("600m", null)), 110, NODE).orElseThrow();
    assertThat(rejection.reason()).isEqualTo("OutOfcpu");
    assertThat(rejection.message()).isEqualTo("Node didn't have enough resource: cpu, requested: 1500, used: 600, "
        + "capacity: 2000");
  }

  @Test
  void memoryBeyondWhatTheNodeLeavesIsOutOfmemory() {
    var rejection = Admission.admit(pod(null, "768Mi"), List.of(pod("1", "512Mi")), 110, NODE).orElseThrow();
    assertThat(rejection.reason()).isEqualTo("OutOfmemory");
    assertThat(rejection.message()).isEqualTo("Node didn't have enough resource: memory, requested: 805306368, "
        + "used: 536870912, capacity: 1073741824");
    // cpu is looked at first, as the kubelet does
    assertThat(Admission.admit(pod("3", "2Gi"), List.of(), 110, NODE).orElseThrow().reason()).isEqualTo("OutOfcpu");
    // the pods count before both
    assertThat(Admission.admit(pod("3", "2Gi"), List.of(pod(null, null)), 1, NODE).orElseThrow().reason())
        .isEqualTo("OutOfpods");
  }

  @Test
  void podsWithoutRequestsAlwaysFitAndANodeWithoutAllocatableChecksNothing() {
    assertThat(Admission.admit(pod(null, null), List.of(pod("2", "1Gi")), 110, NODE)).isEmpty();
    assertThat(Admission.admit(pod("64", "1Ti"), List.of(), 110, new NodeBuilder().withNewMetadata()
        .withName("node-1").endMetadata().build())).isEmpty();
  }

  @Test
  void requestsDefaultToLimitsAndInitContainersCountByTheirLargest() {
    Pod pod = new PodBuilder().withNewMetadata().withName("p").endMetadata().withNewSpec()
        .addNewContainer().withName("a").withNewResources().withLimits(Map.of("cpu", new Quantity("250m")))
        .endResources().endContainer()
        .addNewContainer().withName("b").withNewResources().withRequests(Map.of("cpu", new Quantity("250m")))
        .endResources().endContainer()
        .addToInitContainers(new ContainerBuilder().withName("init").withNewResources()
            .withRequests(Map.of("cpu", new Quantity("1"), "memory", new Quantity("100Mi"))).endResources().build())
        .withOverhead(Map.of("cpu", new Quantity("10m")))
        .endSpec().build();
    assertThat(NodeFit.requests(pod)).isEqualTo(new NodeFit.Requests(1010, 100L * 1024 * 1024));
    // a sidecar (an init container that keeps running) adds to the containers
    pod.getSpec().getInitContainers().add(0, new ContainerBuilder().withName("sidecar").withRestartPolicy("Always")
        .withNewResources().withRequests(Map.of("cpu", new Quantity("2"))).endResources().build());
    assertThat(NodeFit.requests(pod).milliCpu()).isEqualTo(3010);
  }

  @Test
  void aNodeSelectorThatTheNodesLabelsDoNotMatchIsNodeAffinity() {
    Pod pod = pod(null, null);
    pod.getSpec().setNodeSelector(Map.of("zone", "a"));
    assertThat(Admission.admit(pod, List.of(), 110, NODE)).isEmpty();
    pod.getSpec().setNodeSelector(Map.of("zone", "a", "disk", "ssd"));
    var rejection = Admission.admit(pod, List.of(), 110, NODE).orElseThrow();
    assertThat(rejection.reason()).isEqualTo("NodeAffinity");
    assertThat(rejection.message())
        .isEqualTo("Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector");
  }

  @Test
  void requiredNodeAffinityFollowsTheSelectorRules() {
    assertThat(NodeFit.matches(withAffinity(term("zone", "In", "a", "b")), NODE)).isTrue();
    assertThat(NodeFit.matches(withAffinity(term("zone", "In", "b")), NODE)).isFalse();
    assertThat(NodeFit.matches(withAffinity(term("zone", "NotIn", "b")), NODE)).isTrue();
    assertThat(NodeFit.matches(withAffinity(term("disk", "NotIn", "ssd")), NODE)).isTrue(); // missing label
    assertThat(NodeFit.matches(withAffinity(term("disk", "Exists")), NODE)).isFalse();
    assertThat(NodeFit.matches(withAffinity(term("disk", "DoesNotExist")), NODE)).isTrue();
    assertThat(NodeFit.matches(withAffinity(term("gpus", "Gt", "3")), NODE)).isTrue();
    assertThat(NodeFit.matches(withAffinity(term("gpus", "Lt", "3")), NODE)).isFalse();
    assertThat(NodeFit.matches(withAffinity(term("zone", "Gt", "3")), NODE)).isFalse(); // not a number
    // terms are ORed, an empty term matches nothing
    assertThat(NodeFit.matches(withAffinity(term("zone", "In", "b"), term("zone", "In", "a")), NODE)).isTrue();
    assertThat(NodeFit.matches(withAffinity(new NodeSelectorTerm(List.of(), List.of())), NODE)).isFalse();
    // matchFields: metadata.name only
    assertThat(NodeFit.matches(withAffinity(new NodeSelectorTerm(null, List.of(new NodeSelectorRequirement(
        "metadata.name", "In", List.of("node-1"))))), NODE)).isTrue();
    assertThat(NodeFit.matches(withAffinity(new NodeSelectorTerm(null, List.of(new NodeSelectorRequirement(
        "metadata.name", "In", List.of("node-2"))))), NODE)).isFalse();
    assertThat(Admission.admit(withAffinity(term("zone", "In", "b")), List.of(), 110, NODE).orElseThrow().reason())
        .isEqualTo("NodeAffinity");
  }

  @Test
  void affinityComesBeforeTaints() {
    Node tainted = new NodeBuilder(NODE).withNewSpec().addToTaints(new Taint("NoExecute", "k", null, "v"))
        .endSpec().build();
    assertThat(Admission.admit(withAffinity(term("zone", "In", "b")), List.of(), 110, tainted).orElseThrow()
        .reason()).isEqualTo("NodeAffinity");
    assertThat(Admission.admit(pod(null, null), List.of(), 110, tainted).orElseThrow().reason()).isEqualTo("Taint");
  }
}
