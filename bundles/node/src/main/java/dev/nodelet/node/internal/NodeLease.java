package dev.nodelet.node.internal;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.net.HttpURLConnection;
import java.time.Clock;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's heartbeat, as the kubelet's node lease controller: the Lease named after the node in
 * {@code kube-node-lease}, held by the node, {@value #DURATION_SECONDS} s long, its {@code renewTime} renewed on
 * every call, with an owner reference to the Node once its UID is known. An update that meets a newer Lease (409)
 * reads it and updates again; other failures are the caller's to retry.
 */
final class NodeLease {

  static final String NAMESPACE = "kube-node-lease";
  static final int DURATION_SECONDS = 40;
  /** Conflicts in a row before a renewal counts as failed, as the lease controller's {@code maxUpdateRetries}. */
  static final int MAX_CONFLICTS = 5;
  private static final Logger LOG = LoggerFactory.getLogger(NodeLease.class);

  private final KubernetesClient client;
  private final String nodeName;
  private final Clock clock;
  private final Supplier<Optional<String>> nodeUid;
  private Lease latest; // the Lease as last written or read; touched by one task at a time

  /**
   * @param nodeUid the Node's UID once known, for the owner reference
   */
  NodeLease(KubernetesClient client, String nodeName, Clock clock, Supplier<Optional<String>> nodeUid) {
    this.client = client;
    this.nodeName = nodeName;
    this.clock = clock;
    this.nodeUid = nodeUid;
  }

  /**
   * Renews the Lease once: updates the one last seen, or reads (or creates) it first.
   *
   * @return the Lease as written
   * @throws KubernetesClientException if the API server could not be reached or refused
   */
  Lease renew() {
    for (int attempt = 1; ; attempt++) {
      try {
        if (latest == null) {
          Lease existing = resource().withName(nodeName).get();
          if (existing == null) {
            latest = resource().resource(renewed(new LeaseBuilder().withNewMetadata().withName(nodeName)
                .withNamespace(NAMESPACE).endMetadata().build())).create();
            LOG.info("Lease {}/{} created", NAMESPACE, nodeName);
            return latest;
          }
          latest = existing;
        }
        latest = resource().resource(renewed(latest)).update();
        return latest;
      } catch (KubernetesClientException e) {
        // a 409 is a newer Lease (or one created meanwhile): read it and write again; a 404 one deleted
        boolean stale = e.getCode() == HttpURLConnection.HTTP_CONFLICT
            || e.getCode() == HttpURLConnection.HTTP_NOT_FOUND;
        if (stale) {
          latest = null;
        }
        if (e.getCode() != HttpURLConnection.HTTP_CONFLICT || attempt >= MAX_CONFLICTS) {
          throw e;
        }
        LOG.debug("Lease {}/{} changed since it was read: reading it again", NAMESPACE, nodeName);
      }
    }
  }

  private NonNamespaceOperation<Lease, LeaseList, Resource<Lease>> resource() {
    return client.leases().inNamespace(NAMESPACE);
  }

  /** {@code base} held by this node, renewed now, owned by the Node if its UID is known and none owns it yet. */
  private Lease renewed(Lease base) {
    LeaseBuilder builder = new LeaseBuilder(base).editOrNewSpec().withHolderIdentity(nodeName)
        .withLeaseDurationSeconds(DURATION_SECONDS).withRenewTime(ZonedDateTime.ofInstant(clock.instant().truncatedTo(ChronoUnit.MICROS), ZoneOffset.UTC))
        .endSpec();
    List<OwnerReference> owners = base.getMetadata().getOwnerReferences();
    Optional<String> uid = nodeUid.get();
    if ((owners == null || owners.isEmpty()) && uid.isPresent()) {
      builder.editMetadata().withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("v1").withKind("Node")
          .withName(nodeName).withUid(uid.get()).build()).endMetadata();
    }
    return builder.build();
  }
}
