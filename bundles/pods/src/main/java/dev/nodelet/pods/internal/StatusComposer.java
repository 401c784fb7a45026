package dev.nodelet.pods.internal;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.PodReadinessGate;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The kubelet's pod status from its containers: the phase ({@code getPhase} of the kubelet), the conditions
 * {@code PodReadyToStartContainers}, {@code Initialized}, {@code ContainersReady}, {@code Ready} (a condition keeps
 * its {@code lastTransitionTime} while its status stays), and a status per container.
 */
final class StatusComposer {

  private StatusComposer() {
  }

  /**
   * @param pod the pod as the API server has it (its status supplies the previous conditions)
   * @param containers its containers, in the order of the spec
   * @param readyToStart whether what the containers need (volumes, configuration) is ready
   * @param hostIp the node's address; null if unknown
   * @param startTime when Nodelet first took the pod
   * @param now the time for conditions that change
   * @param written the status Nodelet wrote last (newer than the pod's until the pod source brings it); may be null
   * @return the status to write
   */
  static PodStatus compose(Pod pod, List<ContainerRun> containers, boolean readyToStart, String hostIp,
      Instant startTime, Instant now, PodStatus written) {
    String policy = pod.getSpec().getRestartPolicy() == null ? "Always" : pod.getSpec().getRestartPolicy();
    String phase = phase(containers, policy);
    boolean allReady = containers.stream().allMatch(c -> c.state == ContainerRun.State.RUNNING);
    boolean gates = readinessGates(pod);
    PodStatus before = written != null ? written : pod.getStatus();
    List<PodCondition> previous = before == null || before.getConditions() == null
        ? List.of() : before.getConditions();
    List<PodCondition> conditions = new ArrayList<>();
    conditions.add(condition(previous, "PodReadyToStartContainers", readyToStart, null, now));
    conditions.add(condition(previous, "Initialized", true, null, now));
    conditions.add(condition(previous, "ContainersReady", allReady, allReady ? null : "ContainersNotReady", now));
    conditions.add(condition(previous, "Ready", allReady && gates,
        allReady && gates ? null : allReady ? "ReadinessGatesNotReady" : "ContainersNotReady", now));
    // conditions owned by others (readiness gates, PodScheduled) stay as they are
    for (PodCondition other : previous) {
      if (conditions.stream().noneMatch(c -> c.getType().equals(other.getType()))) {
        conditions.add(other);
      }
    }
    List<ContainerStatus> statuses = containers.stream().map(ContainerRun::status).toList();
    PodStatusBuilder status = new PodStatusBuilder().withPhase(phase).withConditions(conditions)
        .withContainerStatuses(statuses).withStartTime(Times.format(startTime)).withQosClass(qos(pod));
    if (hostIp != null) {
      status.withHostIP(hostIp).withHostIPs(new io.fabric8.kubernetes.api.model.HostIP(hostIp))
          .withPodIP(hostIp).withPodIPs(new PodIP(hostIp));
    }
    return status.build();
  }

  /** The kubelet's {@code getPhase} for pods without init containers. */
  static String phase(List<ContainerRun> containers, String restartPolicy) {
    int waiting = 0;
    int running = 0;
    int stopped = 0;
    int succeeded = 0;
    for (ContainerRun c : containers) {
      switch (c.state) {
        case RUNNING -> running++;
        case TERMINATED -> {
          stopped++;
          if (c.exitCode == 0) {
            succeeded++;
          }
        }
        default -> {
          if (c.lastState != null && c.lastState.getTerminated() != null) {
            stopped++;
            if (c.lastState.getTerminated().getExitCode() == 0) {
              succeeded++;
            }
          } else {
            waiting++;
          }
        }
      }
    }
    if (waiting > 0) {
      return "Pending";
    }
    if (running > 0) {
      return "Running";
    }
    if (stopped > 0) {
      if (restartPolicy.equals("Always")) {
        return "Running";
      }
      if (stopped == succeeded) {
        return "Succeeded";
      }
      return restartPolicy.equals("Never") ? "Failed" : "Running";
    }
    return "Pending";
  }

  private static boolean readinessGates(Pod pod) {
    List<PodReadinessGate> gates = pod.getSpec().getReadinessGates();
    if (gates == null || gates.isEmpty()) {
      return true;
    }
    List<PodCondition> conditions = pod.getStatus() == null || pod.getStatus().getConditions() == null
        ? List.of() : pod.getStatus().getConditions();
    return gates.stream().allMatch(g -> conditions.stream()
        .anyMatch(c -> c.getType().equals(g.getConditionType()) && "True".equals(c.getStatus())));
  }

  private static PodCondition condition(List<PodCondition> previous, String type, boolean value, String reason,
      Instant now) {
    String status = value ? "True" : "False";
    String since = previous.stream().filter(c -> c.getType().equals(type) && status.equals(c.getStatus()))
        .map(PodCondition::getLastTransitionTime).filter(Objects::nonNull).findFirst().orElse(Times.format(now));
    return new PodConditionBuilder().withType(type).withStatus(status).withReason(reason)
        .withLastTransitionTime(since).build();
  }

  private static String qos(Pod pod) {
    return pod.getStatus() != null && pod.getStatus().getQosClass() != null
        ? pod.getStatus().getQosClass() : "BestEffort";
  }
}
