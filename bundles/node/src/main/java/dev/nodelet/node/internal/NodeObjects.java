package dev.nodelet.node.internal;

import io.fabric8.kubernetes.api.model.DaemonEndpointBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeDaemonEndpointsBuilder;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.NodeStatusBuilder;
import io.fabric8.kubernetes.api.model.NodeSystemInfo;
import io.fabric8.kubernetes.api.model.NodeSystemInfoBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/** The Node as this node wants it: its labels and taints at creation, and its status. Pure functions. */
final class NodeObjects {

  static final String HOSTNAME_LABEL = "kubernetes.io/hostname";
  static final String OS_LABEL = "kubernetes.io/os";
  static final String ARCH_LABEL = "kubernetes.io/arch";
  static final String READY = "Ready";
  /** The Kubernetes API level whose kubelet rules Nodelet follows; the version tools parse from kubeletVersion. */
  static final String KUBERNETES_LEVEL = "v1.34.0";
  /** What tells a Nodelet's kubeletVersion from a kubelet's. */
  static final String NODELET_MARK = "-nodelet.";

  private NodeObjects() {
  }

  /**
   * The identity a node reports: its name and how it is reached.
   *
   * @param nodeName the Node's name
   * @param hostname the Hostname address and the kubernetes.io/hostname label
   */
  record Identity(String nodeName, String hostname) {
  }

  /** The labels the node owns (the kubelet's default labels). */
  static Map<String, String> defaultLabels(Identity identity, HostFacts facts) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(HOSTNAME_LABEL, identity.hostname());
    labels.put(OS_LABEL, facts.operatingSystem());
    labels.put(ARCH_LABEL, facts.architecture());
    return labels;
  }

  /** The Node to create: default and configured labels, the registration taints and the first status. */
  static Node initial(Identity identity, NodeSettings settings, HostFacts facts, NodeStatus status) {
    Map<String, String> labels = new LinkedHashMap<>(settings.labels());
    labels.putAll(defaultLabels(identity, facts));
    return new NodeBuilder().withNewMetadata().withName(identity.nodeName()).withLabels(labels).endMetadata()
        .withNewSpec().withTaints(settings.taints().isEmpty() ? null : settings.taints()).endSpec()
        .withStatus(status).build();
  }

  /**
   * The status this node reports now.
   *
   * @param notReady why the node cannot run pods; empty when it can
   * @param current the status on the API server, whose Ready condition keeps its transition time while it does
   *     not flip; null for none
   */
  static NodeStatus status(Identity identity, NodeSettings settings, HostFacts facts, Optional<String> notReady,
      NodeStatus current, Instant now) {
    Map<String, Quantity> capacity = new LinkedHashMap<>();
    capacity.put("cpu", new Quantity(Integer.toString(facts.cpus())));
    capacity.put("memory", memory(BigDecimal.valueOf(facts.memoryBytes())));
    capacity.put("pods", new Quantity(Integer.toString(settings.maxPods())));
    capacity.put("ephemeral-storage", memory(BigDecimal.valueOf(facts.ephemeralStorageBytes())));
    Map<String, Quantity> allocatable = new LinkedHashMap<>(capacity);
    allocatable.put("cpu", cpu(BigDecimal.valueOf(facts.cpus()).subtract(settings.reservedCpu())));
    allocatable.put("memory", memory(BigDecimal.valueOf(facts.memoryBytes()).subtract(settings.reservedMemory())));
    String heartbeat = time(now);
    List<NodeCondition> conditions = new ArrayList<>();
    conditions.add(condition(current, "MemoryPressure", "False", "KubeletHasSufficientMemory",
        "kubelet has sufficient memory available", heartbeat));
    conditions.add(condition(current, "DiskPressure", "False", "KubeletHasNoDiskPressure",
        "kubelet has no disk pressure", heartbeat));
    conditions.add(condition(current, "PIDPressure", "False", "KubeletHasSufficientPID",
        "kubelet has sufficient PID available", heartbeat));
    conditions.add(notReady.map(why -> condition(current, READY, "False", "KubeletNotReady", why, heartbeat))
        .orElseGet(() -> condition(current, READY, "True", "KubeletReady", "kubelet is posting ready status",
            heartbeat)));
    NodeSystemInfo info = new NodeSystemInfoBuilder()
        .withKubeletVersion(KUBERNETES_LEVEL + NODELET_MARK + facts.nodeletVersion())
        .withOperatingSystem(facts.operatingSystem()).withArchitecture(facts.architecture())
        .withOsImage(facts.osImage()).withKernelVersion(facts.kernelVersion())
        .withContainerRuntimeVersion(facts.runtimeVersion())
        .withMachineID(blankToNull(facts.machineId())).withBootID(blankToNull(facts.bootId()))
        .build();
    return new NodeStatusBuilder().withCapacity(capacity).withAllocatable(allocatable).withConditions(conditions)
        .withAddresses(new NodeAddress(facts.internalIp(), "InternalIP"),
            new NodeAddress(identity.hostname(), "Hostname"))
        .withDaemonEndpoints(new NodeDaemonEndpointsBuilder().withKubeletEndpoint(new DaemonEndpointBuilder()
            .withPort(settings.kubeletPort()).build()).build())
        .withNodeInfo(info).build();
  }

  /**
   * Whether {@code desired} says anything that {@code current} does not, heartbeats aside: what the kubelet calls
   * a changed status (only the parts this node reports are compared).
   */
  static boolean changed(NodeStatus current, NodeStatus desired) {
    if (current == null) {
      return true;
    }
    for (NodeCondition want : desired.getConditions()) {
      NodeCondition have = find(current, want.getType()).orElse(null);
      if (have == null || !Objects.equals(have.getStatus(), want.getStatus())
          || !Objects.equals(have.getReason(), want.getReason())
          || !Objects.equals(have.getMessage(), want.getMessage())
          || !Objects.equals(have.getLastTransitionTime(), want.getLastTransitionTime())) {
        return true;
      }
    }
    return !sameAmounts(current.getCapacity(), desired.getCapacity())
        || !sameAmounts(current.getAllocatable(), desired.getAllocatable())
        || !Objects.equals(addresses(current.getAddresses()), addresses(desired.getAddresses()))
        || !Objects.equals(port(current), port(desired))
        || !sameInfo(current.getNodeInfo(), desired.getNodeInfo());
  }

  private static boolean sameAmounts(Map<String, Quantity> current, Map<String, Quantity> desired) {
    if (current == null) {
      return desired.isEmpty();
    }
    for (Map.Entry<String, Quantity> entry : desired.entrySet()) {
      Quantity have = current.get(entry.getKey());
      if (have == null || Quantity.getAmountInBytes(have).compareTo(Quantity.getAmountInBytes(entry.getValue()))
          != 0) {
        return false;
      }
    }
    return true;
  }

  private static List<String> addresses(List<NodeAddress> addresses) {
    return addresses == null ? List.of()
        : addresses.stream().map(a -> a.getType() + "=" + a.getAddress()).toList();
  }

  private static Integer port(NodeStatus status) {
    return status.getDaemonEndpoints() == null || status.getDaemonEndpoints().getKubeletEndpoint() == null ? null
        : status.getDaemonEndpoints().getKubeletEndpoint().getPort();
  }

  private static boolean sameInfo(NodeSystemInfo have, NodeSystemInfo want) {
    return have != null && Objects.equals(have.getKubeletVersion(), want.getKubeletVersion())
        && Objects.equals(have.getOperatingSystem(), want.getOperatingSystem())
        && Objects.equals(have.getArchitecture(), want.getArchitecture())
        && Objects.equals(have.getOsImage(), want.getOsImage())
        && Objects.equals(have.getKernelVersion(), want.getKernelVersion())
        && Objects.equals(have.getContainerRuntimeVersion(), want.getContainerRuntimeVersion())
        && Objects.equals(have.getMachineID(), want.getMachineID())
        && Objects.equals(have.getBootID(), want.getBootID());
  }

  private static String blankToNull(String value) {
    return value == null || value.isBlank() ? null : value;
  }

  /** A condition; its transition time stays as on the server while its status does not flip. */
  private static NodeCondition condition(NodeStatus current, String type, String status, String reason,
      String message, String now) {
    String transition = Optional.ofNullable(current).flatMap(c -> find(c, type))
        .filter(c -> status.equals(c.getStatus()) && c.getLastTransitionTime() != null)
        .map(NodeCondition::getLastTransitionTime).orElse(now);
    return new NodeCondition(now, transition, message, reason, status, type);
  }

  static Optional<NodeCondition> find(NodeStatus status, String type) {
    return status.getConditions() == null ? Optional.empty()
        : status.getConditions().stream().filter(c -> type.equals(c.getType())).findFirst();
  }

  /** A metav1.Time: RFC 3339 to the second. */
  static String time(Instant instant) {
    return DateTimeFormatter.ISO_INSTANT.format(instant.truncatedTo(ChronoUnit.SECONDS));
  }

  /** Whole cores, else millicores, as the kubelet prints them. */
  static Quantity cpu(BigDecimal cores) {
    BigDecimal value = cores.max(BigDecimal.ZERO);
    if (value.stripTrailingZeros().scale() <= 0) {
      return new Quantity(value.setScale(0, RoundingMode.DOWN).toPlainString());
    }
    return new Quantity(value.movePointRight(3).setScale(0, RoundingMode.DOWN).toPlainString() + "m");
  }

  /** Bytes, in Ki when they divide evenly, as the kubelet prints them. */
  static Quantity memory(BigDecimal bytes) {
    BigDecimal value = bytes.max(BigDecimal.ZERO).setScale(0, RoundingMode.DOWN);
    BigDecimal[] kibi = value.divideAndRemainder(BigDecimal.valueOf(1024));
    return kibi[1].signum() == 0 && value.signum() > 0 ? new Quantity(kibi[0].toPlainString() + "Ki")
        : new Quantity(value.toPlainString());
  }
}
