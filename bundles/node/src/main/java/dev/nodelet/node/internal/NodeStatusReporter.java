package dev.nodelet.node.internal;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The node's status, as the kubelet's {@code tryUpdateNodeStatus} with a node lease: computed on every call from the
 * Node as the API server holds it, and written (a strategic merge patch of {@code nodes/status}) only when it
 * changed, heartbeats aside, or when this reporter's last write is {@link #REPORT_INTERVAL} old.
 */
final class NodeStatusReporter {

  /** The kubelet's {@code nodeStatusReportFrequency}. */
  static final Duration REPORT_INTERVAL = Duration.ofMinutes(5);

  private final KubernetesClient client;
  private final NodeObjects.Identity identity;
  private final NodeSettings settings;
  private final Supplier<HostFacts> facts;
  private final Supplier<Optional<String>> notReady;
  private final Clock clock;
  private Instant lastReport; // touched by one task at a time
  private volatile Node latest; // the Node as last read or written

  /**
   * @param facts the machine's facts, asked on every call (the processors and the heap may change)
   * @param notReady why the node cannot run pods now; empty when it can
   */
  NodeStatusReporter(KubernetesClient client, NodeObjects.Identity identity, NodeSettings settings,
      Supplier<HostFacts> facts, Supplier<Optional<String>> notReady, Clock clock) {
    this.client = client;
    this.identity = identity;
    this.settings = settings;
    this.facts = facts;
    this.notReady = notReady;
    this.clock = clock;
  }

  /** @return the Node as last read or written; null before the first read, or once it was found gone */
  Node latest() {
    return latest;
  }

  /** The status to report now over {@code current} (null for a Node not created yet). */
  NodeStatus desired(NodeStatus current) {
    return NodeObjects.status(identity, settings, facts.get(), notReady.get(), current, clock.instant());
  }

  /**
   * Computes the status and writes it if it changed or the last write is old.
   *
   * @return whether it was written
   * @throws KubernetesClientException if the API server could not be reached or refused (the Node is gone, say)
   */
  boolean update() {
    Node node = client.nodes().withName(identity.nodeName()).get();
    latest = node;
    if (node == null) {
      throw new KubernetesClientException("node " + identity.nodeName() + " not found (deleted since it was "
          + "registered; it registers again when Nodelet restarts, as a kubelet does)");
    }
    Instant now = clock.instant();
    NodeStatus status = desired(node.getStatus());
    boolean due = lastReport == null || !now.isBefore(lastReport.plus(REPORT_INTERVAL));
    if (!due && !NodeObjects.changed(node.getStatus(), status)) {
      return false;
    }
    latest = client.nodes().withName(identity.nodeName()).subresource("status").patch(
        PatchContext.of(PatchType.STRATEGIC_MERGE),
        client.getKubernetesSerialization().asJson(Map.of("status", status)));
    lastReport = now;
    return true;
  }
}
