package dev.nodelet.pods.internal;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.osgi.framework.Bundle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a pod seen for the first time takes from what exists already: the bundles a previous Nodelet installed for
 * it (adopted with the status the pod carries), and the facts of this node that admission needs.
 */
final class Adoption {

  private static final Logger LOG = LoggerFactory.getLogger(Adoption.class);

  private Adoption() {
  }

  /** A bundle installed for the container before (Nodelet restarted): its status carries over. */
  static void adopt(Pod pod, ContainerRun c, Bundle bundle, Instant now) {
    c.bundleId = bundle.getBundleId();
    ContainerStatus previous = pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null ? null
        : pod.getStatus().getContainerStatuses().stream().filter(s -> s.getName().equals(c.name)).findFirst()
            .orElse(null);
    if (previous != null) {
      c.restartCount = previous.getRestartCount() == null ? 0 : previous.getRestartCount();
      c.imageId = previous.getImageID() == null ? "" : previous.getImageID();
      c.lastState = previous.getLastState() != null && previous.getLastState().getTerminated() != null
          ? previous.getLastState() : null;
    }
    Instant startedAt = previous != null && previous.getState() != null && previous.getState().getRunning() != null
        ? Times.parse(previous.getState().getRunning().getStartedAt()) : null;
    if (ContainerSteps.running(bundle)) {
      c.running(startedAt == null ? now : startedAt);
    } else if (previous != null && previous.getState() != null && previous.getState().getTerminated() != null) {
      // it ended before the restart: it stays ended (or is restarted by its policy), never started again blindly
      var ended = previous.getState().getTerminated();
      c.startedAt = Times.parse(ended.getStartedAt());
      Instant finished = Times.parse(ended.getFinishedAt());
      c.terminated(finished == null ? now : finished, ended.getExitCode() == null ? 0 : ended.getExitCode(),
          ended.getMessage());
      c.startedOnce = true;
    } else if (previous != null && previous.getState() != null && previous.getState().getWaiting() != null
        && "CrashLoopBackOff".equals(previous.getState().getWaiting().getReason())) {
      c.startedOnce = true;
      c.waiting("CrashLoopBackOff", previous.getState().getWaiting().getMessage());
    }
    LOG.info("Container {} adopted (bundle {}, {})", c.location, bundle.getBundleId(),
        ContainerSteps.running(bundle) ? "running" : "not running");
  }

  static int capacity(Node node, int defaultCapacity) {
    Map<String, Quantity> allocatable = node == null || node.getStatus() == null ? null
        : node.getStatus().getAllocatable();
    Quantity pods = allocatable == null ? null : allocatable.get("pods");
    return pods == null ? defaultCapacity : pods.getNumericalAmount().intValue();
  }

  static List<Taint> taints(Node node) {
    return node == null || node.getSpec() == null || node.getSpec().getTaints() == null ? List.of()
        : node.getSpec().getTaints();
  }

  static Optional<String> address(Node node) {
    if (node == null || node.getStatus() == null || node.getStatus().getAddresses() == null) {
      return Optional.empty();
    }
    return node.getStatus().getAddresses().stream().filter(a -> "InternalIP".equals(a.getType()))
        .map(NodeAddress::getAddress).findFirst();
  }

}
