package dev.nodelet.pods.internal;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The kubelet's admission of a pod bound to this node, in the kubelet's order: room in the node's {@code pods}
 * capacity, its {@code cpu} and {@code memory} requests within what the node's allocatable leaves
 * ({@link NodeFit}), its node selector and required node affinity, and every {@code NoExecute} taint of the node
 * tolerated. A rejected pod fails with the kubelet's reason and message and never starts.
 */
final class Admission {

  /**
   * Why a pod was rejected.
   *
   * @param reason the pod's {@code status.reason}
   * @param message the pod's {@code status.message}
   */
  record Rejection(String reason, String message) {
  }

  private Admission() {
  }

  /**
   * @param pod the pod
   * @param active the pods admitted and not terminated on this node, this one excluded
   * @param capacity the node's allocatable {@code pods}
   * @param node the node; null if it could not be read (then only the pods count is checked)
   * @return the first rejection; empty when the pod may run
   */
  static Optional<Rejection> admit(Pod pod, List<Pod> active, int capacity, Node node) {
    Optional<Rejection> pods = podsCount(active.size(), capacity);
    if (pods.isPresent()) {
      return pods;
    }
    NodeFit.Requests used = active.stream().map(NodeFit::requests).reduce(NodeFit.Requests.NONE,
        NodeFit.Requests::plus);
    Optional<Rejection> resources = NodeFit.resources(pod, used, node);
    if (resources.isPresent()) {
      return resources;
    }
    Optional<Rejection> affinity = NodeFit.affinity(pod, node);
    if (affinity.isPresent()) {
      return affinity;
    }
    return taints(pod, Adoption.taints(node));
  }

  /**
   * @param pod the pod
   * @param used the pods admitted and not terminated on this node, this one excluded
   * @param capacity the node's allocatable {@code pods}
   * @param taints the node's taints
   * @return the rejection; empty when the pod may run
   */
  static Optional<Rejection> admit(Pod pod, int used, int capacity, List<Taint> taints) {
    Optional<Rejection> pods = podsCount(used, capacity);
    return pods.isPresent() ? pods : taints(pod, taints);
  }

  private static Optional<Rejection> podsCount(int used, int capacity) {
    if (used + 1 > capacity) {
      return Optional.of(new Rejection("OutOfpods", "Node didn't have enough resource: pods, requested: 1, used: "
          + used + ", capacity: " + capacity));
    }
    return Optional.empty();
  }

  private static Optional<Rejection> taints(Pod pod, List<Taint> taints) {
    List<Toleration> tolerations = pod.getSpec() == null || pod.getSpec().getTolerations() == null
        ? List.of() : pod.getSpec().getTolerations();
    for (Taint taint : taints) {
      if ("NoExecute".equals(taint.getEffect()) && tolerations.stream().noneMatch(t -> tolerates(t, taint))) {
        return Optional.of(new Rejection("Taint", "Predicate TaintToleration failed: node has taint "
            + taint.getKey() + (taint.getValue() == null || taint.getValue().isEmpty() ? "" : "=" + taint.getValue())
            + ":" + taint.getEffect() + " that the pod does not tolerate"));
      }
    }
    return Optional.empty();
  }

  /** The API's rule: effect empty or equal; key empty with Exists matches all; Exists matches the key; Equal both. */
  static boolean tolerates(Toleration toleration, Taint taint) {
    String effect = toleration.getEffect();
    if (effect != null && !effect.isEmpty() && !effect.equals(taint.getEffect())) {
      return false;
    }
    String key = toleration.getKey();
    String operator = toleration.getOperator() == null || toleration.getOperator().isEmpty()
        ? "Equal" : toleration.getOperator();
    if (key == null || key.isEmpty()) {
      return operator.equals("Exists");
    }
    if (!key.equals(taint.getKey())) {
      return false;
    }
    return operator.equals("Exists")
        || (operator.equals("Equal") && Objects.equals(nullToEmpty(toleration.getValue()),
            nullToEmpty(taint.getValue())));
  }

  private static String nullToEmpty(String value) {
    return value == null ? "" : value;
  }
}
