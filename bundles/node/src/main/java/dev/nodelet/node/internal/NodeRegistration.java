package dev.nodelet.node.internal;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.net.HttpURLConnection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registration, as the kubelet's {@code registerWithAPIServer}: create the Node; on {@code AlreadyExists} read it
 * and reconcile what the node owns (its default labels; capacity and the rest of the status follow with the status
 * loop), leaving the configured labels and the registration taints as they are, since those are set at creation
 * only. A Node that a kubelet reports on is not adopted (<b>Nodelet</b>: the two would overwrite each other). One
 * attempt per call; the caller retries with back-off.
 */
final class NodeRegistration {

  private static final Logger LOG = LoggerFactory.getLogger(NodeRegistration.class);

  private final KubernetesClient client;
  private final NodeObjects.Identity identity;
  private final NodeSettings settings;
  private final HostFacts facts;
  private final Supplier<Node> initial;

  /**
   * @param initial the Node to create, with its first status (built when an attempt is made)
   */
  NodeRegistration(KubernetesClient client, NodeObjects.Identity identity, NodeSettings settings, HostFacts facts,
      Supplier<Node> initial) {
    this.client = client;
    this.identity = identity;
    this.settings = settings;
    this.facts = facts;
    this.initial = initial;
  }

  /**
   * One attempt.
   *
   * @return the Node as the API server holds it after the attempt
   * @throws KubernetesClientException if the API server could not be reached or refused (retry later)
   */
  Node register() {
    try {
      Node created = client.nodes().resource(initial.get()).create();
      LOG.info("Node {} registered (taints {})", identity.nodeName(),
          settings.taints().stream().map(NodeSettings::format).toList());
      return created;
    } catch (KubernetesClientException e) {
      if (e.getCode() != HttpURLConnection.HTTP_CONFLICT) {
        throw e;
      }
    }
    Node existing = client.nodes().withName(identity.nodeName()).get();
    if (existing == null) {
      // deleted between the create and the get: the next attempt creates it
      throw new KubernetesClientException("node " + identity.nodeName() + " existed, then was gone");
    }
    String kubelet = existing.getStatus() == null || existing.getStatus().getNodeInfo() == null ? null
        : existing.getStatus().getNodeInfo().getKubeletVersion();
    if (kubelet != null && !kubelet.isEmpty() && !kubelet.contains(NodeObjects.NODELET_MARK)) {
      // two agents writing one Node's status and Lease would flip it between them
      throw new IllegalStateException("node " + identity.nodeName() + " is kept by a kubelet (kubeletVersion "
          + kubelet + "): node mode does not take over a kubelet's node; give this Nodelet a node name of its own "
          + "(node.name of dev.nodelet.kube)");
    }
    Map<String, String> labels = existing.getMetadata().getLabels() == null ? Map.of()
        : existing.getMetadata().getLabels();
    Map<String, String> changes = new LinkedHashMap<>();
    NodeObjects.defaultLabels(identity, facts).forEach((key, value) -> {
      if (!Objects.equals(labels.get(key), value)) {
        changes.put(key, value);
      }
    });
    if (changes.isEmpty()) {
      LOG.info("Node {} exists already and is adopted as it is", identity.nodeName());
      return existing;
    }
    Node patched = client.nodes().withName(identity.nodeName()).patch(
        PatchContext.of(PatchType.STRATEGIC_MERGE),
        client.getKubernetesSerialization().asJson(Map.of("metadata", Map.of("labels", changes))));
    LOG.info("Node {} exists already and is adopted; its labels {} set", identity.nodeName(), changes);
    return patched;
  }
}
