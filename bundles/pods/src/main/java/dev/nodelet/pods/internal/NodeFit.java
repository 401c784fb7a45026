package dev.nodelet.pods.internal;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the kubelet's admission checks of a pod against its node besides the pods count and taints: the pod's
 * {@code cpu} and {@code memory} requests within the node's allocatable minus the requests of the pods it runs
 * ({@code noderesources.Fits}), and its node selector and required node affinity
 * ({@code GetRequiredNodeAffinity(pod).Match(node)}).
 */
final class NodeFit {

  private NodeFit() {
  }

  /**
   * A pod's requests as the scheduler and the kubelet count them ({@code resourcehelper.PodRequests}).
   *
   * @param milliCpu cpu in thousandths of a core
   * @param memory memory in bytes
   */
  record Requests(long milliCpu, long memory) {
    static final Requests NONE = new Requests(0, 0);

    Requests plus(Requests other) {
      return new Requests(milliCpu + other.milliCpu, memory + other.memory);
    }

    Requests max(Requests other) {
      return new Requests(Math.max(milliCpu, other.milliCpu), Math.max(memory, other.memory));
    }
  }

  /**
   * The containers' requests summed; init containers run before them one at a time, so the pod needs the larger
   * of that sum and each init container's request (plus the sidecars started before it, which keep running); then
   * the pod's overhead. Pod-level requests, where given, stand for the containers'. A request not given defaults
   * to the limit, as the API server defaults it.
   */
  static Requests requests(Pod pod) {
    if (pod.getSpec() == null) {
      return Requests.NONE;
    }
    Requests containers = Requests.NONE;
    for (Container c : Optional.ofNullable(pod.getSpec().getContainers()).orElse(List.of())) {
      containers = containers.plus(of(c.getResources()));
    }
    Requests sidecars = Requests.NONE;
    Requests init = Requests.NONE;
    for (Container c : Optional.ofNullable(pod.getSpec().getInitContainers()).orElse(List.of())) {
      Requests own = of(c.getResources());
      if ("Always".equals(c.getRestartPolicy())) {
        sidecars = sidecars.plus(own);
        init = init.max(sidecars);
      } else {
        init = init.max(sidecars.plus(own));
      }
    }
    Requests total = containers.plus(sidecars).max(init);
    Requests podLevel = of(pod.getSpec().getResources());
    Map<String, Quantity> podRequests = effectiveRequests(pod.getSpec().getResources());
    total = new Requests(podRequests.containsKey("cpu") ? podLevel.milliCpu : total.milliCpu,
        podRequests.containsKey("memory") ? podLevel.memory : total.memory);
    Map<String, Quantity> overhead = pod.getSpec().getOverhead();
    if (overhead != null) {
      total = total.plus(new Requests(milli(overhead.get("cpu")), bytes(overhead.get("memory"))));
    }
    return total;
  }

  private static Requests of(ResourceRequirements resources) {
    Map<String, Quantity> requests = effectiveRequests(resources);
    return new Requests(milli(requests.get("cpu")), bytes(requests.get("memory")));
  }

  /** The requests, each missing one taking the limit's value. */
  private static Map<String, Quantity> effectiveRequests(ResourceRequirements resources) {
    if (resources == null) {
      return Map.of();
    }
    Map<String, Quantity> out = new java.util.HashMap<>();
    if (resources.getLimits() != null) {
      out.putAll(resources.getLimits());
    }
    if (resources.getRequests() != null) {
      out.putAll(resources.getRequests());
    }
    return out;
  }

  /** Kubernetes' MilliValue: rounded up. */
  static long milli(Quantity quantity) {
    return quantity == null ? 0 : quantity.getNumericalAmount().multiply(BigDecimal.valueOf(1000))
        .setScale(0, RoundingMode.CEILING).longValueExact();
  }

  /** Kubernetes' Value: rounded up. */
  static long bytes(Quantity quantity) {
    return quantity == null ? 0 : quantity.getNumericalAmount().setScale(0, RoundingMode.CEILING).longValueExact();
  }

  /**
   * @param pod the pod
   * @param used the requests of the pods the node runs, this one excluded
   * @param node the node
   * @return the kubelet's rejection for the first resource that does not fit ({@code OutOfcpu}, then
   *     {@code OutOfmemory}); empty when they fit or the node reports no allocatable for them
   */
  static Optional<Admission.Rejection> resources(Pod pod, Requests used, Node node) {
    Map<String, Quantity> allocatable = node == null || node.getStatus() == null ? null
        : node.getStatus().getAllocatable();
    if (allocatable == null) {
      return Optional.empty();
    }
    Requests wanted = requests(pod);
    Quantity cpu = allocatable.get("cpu");
    if (cpu != null && wanted.milliCpu > 0 && wanted.milliCpu > milli(cpu) - used.milliCpu) {
      return Optional.of(insufficient("cpu", wanted.milliCpu, used.milliCpu, milli(cpu)));
    }
    Quantity memory = allocatable.get("memory");
    if (memory != null && wanted.memory > 0 && wanted.memory > bytes(memory) - used.memory) {
      return Optional.of(insufficient("memory", wanted.memory, used.memory, bytes(memory)));
    }
    return Optional.empty();
  }

  private static Admission.Rejection insufficient(String resource, long requested, long used, long capacity) {
    return new Admission.Rejection("OutOf" + resource, "Node didn't have enough resource: " + resource
        + ", requested: " + requested + ", used: " + used + ", capacity: " + capacity);
  }

  /** @return the kubelet's {@code NodeAffinity} rejection when the node selector or required affinity fails */
  static Optional<Admission.Rejection> affinity(Pod pod, Node node) {
    if (node == null || pod.getSpec() == null || matches(pod, node)) {
      return Optional.empty();
    }
    return Optional.of(new Admission.Rejection("NodeAffinity",
        "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector"));
  }

  static boolean matches(Pod pod, Node node) {
    Map<String, String> labels = node.getMetadata() == null || node.getMetadata().getLabels() == null ? Map.of()
        : node.getMetadata().getLabels();
    Map<String, String> selector = pod.getSpec().getNodeSelector();
    if (selector != null && selector.entrySet().stream()
        .anyMatch(e -> !e.getValue().equals(labels.get(e.getKey())))) {
      return false;
    }
    NodeSelector required = pod.getSpec().getAffinity() == null
        || pod.getSpec().getAffinity().getNodeAffinity() == null ? null
        : pod.getSpec().getAffinity().getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution();
    if (required == null) {
      return true;
    }
    String name = node.getMetadata() == null ? null : node.getMetadata().getName();
    // the terms are ORed; a term's expressions and fields are ANDed; an empty term matches nothing
    return Optional.ofNullable(required.getNodeSelectorTerms()).orElse(List.of()).stream()
        .anyMatch(term -> matches(term, labels, name));
  }

  private static boolean matches(NodeSelectorTerm term, Map<String, String> labels, String name) {
    List<NodeSelectorRequirement> expressions = Optional.ofNullable(term.getMatchExpressions()).orElse(List.of());
    List<NodeSelectorRequirement> fields = Optional.ofNullable(term.getMatchFields()).orElse(List.of());
    if (expressions.isEmpty() && fields.isEmpty()) {
      return false;
    }
    for (NodeSelectorRequirement r : expressions) {
      if (!matches(r, labels.get(r.getKey()))) {
        return false;
      }
    }
    for (NodeSelectorRequirement r : fields) {
      // metadata.name is the only field the API allows, with In and NotIn
      if (!"metadata.name".equals(r.getKey()) || !matches(r, name)) {
        return false;
      }
    }
    return true;
  }

  /** A label selector requirement: NotIn and DoesNotExist match a missing label; Gt and Lt compare integers. */
  static boolean matches(NodeSelectorRequirement r, String value) {
    List<String> values = Optional.ofNullable(r.getValues()).orElse(List.of());
    return switch (String.valueOf(r.getOperator())) {
      case "In" -> value != null && values.contains(value);
      case "NotIn" -> value == null || !values.contains(value);
      case "Exists" -> value != null;
      case "DoesNotExist" -> value == null;
      case "Gt", "Lt" -> {
        if (value == null || values.size() != 1) {
          yield false;
        }
        try {
          long have = Long.parseLong(value);
          long bound = Long.parseLong(values.get(0));
          yield "Gt".equals(r.getOperator()) ? have > bound : have < bound;
        } catch (NumberFormatException e) {
          yield false;
        }
      }
      default -> false;
    };
  }
}
