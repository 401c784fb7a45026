package dev.nodelet.node.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Lease in kube-node-lease against the embedded API server: cadence, conflicts, retries. */
class NodeLeaseTest {

  private static final String NODE = "node-a";

  private EmbeddedApiServer server;
  private KubernetesClient client;
  private final DrivenTime time = new DrivenTime();
  private NodeAgent agent;

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
    client = server.newClient();
    agent = NodeAgent.builder(client, new NodeObjects.Identity(NODE, NODE), NodeSettings.defaults(),
        () -> Facts.of(4)).clock(time).timer(time.timer()).build();
  }

  @AfterEach
  void stop() {
    agent.close();
    client.close();
    server.close();
  }

  private Lease lease() {
    return client.leases().inNamespace("kube-node-lease").withName(NODE).get();
  }

  private ZonedDateTime at(Duration sinceStart) {
    return ZonedDateTime.ofInstant(DrivenTime.START.plus(sinceStart), ZoneOffset.UTC);
  }

  private long leaseUpdates() {
    return server.writes().stream().filter(w -> w.resource().equals("leases") && w.verb() == Verb.UPDATE
        && w.succeeded()).count();
  }

  @Test
  void createsTheLeaseHeldByTheNodeAndOwnedByIt() {
    agent.start();
    time.runDue();

    Lease lease = lease();
    assertThat(lease.getSpec().getHolderIdentity()).isEqualTo(NODE);
    assertThat(lease.getSpec().getLeaseDurationSeconds()).isEqualTo(40);
    assertThat(lease.getSpec().getRenewTime().toInstant()).isEqualTo(DrivenTime.START);
    String uid = client.nodes().withName(NODE).get().getMetadata().getUid();
    assertThat(lease.getMetadata().getOwnerReferences()).extracting(OwnerReference::getKind,
        OwnerReference::getName, OwnerReference::getUid).containsExactly(
            org.assertj.core.groups.Tuple.tuple("Node", NODE, uid));
    assertThat(agent.problem()).isEmpty();
  }

  @Test
  void renewsEveryTenSeconds() {
    agent.start();
    time.runDue();
    for (int renewal = 1; renewal <= 3; renewal++) {
      time.advance(Duration.ofMillis(9_999));
      assertThat(leaseUpdates()).as("renewals before %d x 10 s", renewal).isEqualTo(renewal - 1);
      time.advance(Duration.ofMillis(1));
      assertThat(leaseUpdates()).isEqualTo(renewal);
      assertThat(lease().getSpec().getRenewTime().toInstant()).isEqualTo(at(Duration.ofSeconds(10L * renewal))
          .toInstant());
    }
  }

  @Test
  void aConflictIsReadAndUpdatedAgainAtOnce() {
    agent.start();
    time.runDue();
    // another writer moved the Lease on: the node's copy is stale
    Lease theirs = lease();
    client.leases().inNamespace("kube-node-lease").resource(new LeaseBuilder(theirs).editSpec()
        .withHolderIdentity("someone-else").endSpec().build()).update();
    server.clearWrites();

    time.advance(Duration.ofSeconds(10));

    assertThat(server.writes()).filteredOn(w -> w.resource().equals("leases"))
        .extracting(w -> w.verb() + " " + w.status()).containsExactly("UPDATE 409", "UPDATE 200");
    Lease lease = lease();
    assertThat(lease.getSpec().getHolderIdentity()).isEqualTo(NODE);
    assertThat(lease.getSpec().getRenewTime().toInstant()).isEqualTo(at(Duration.ofSeconds(10)).toInstant());
  }

  @Test
  void aFailedRenewalIsRetriedAfter200MillisecondsDoublingThenTheIntervalAgain() {
    agent.start();
    time.runDue();
    server.failNext(Verb.UPDATE, "leases", 3, 500);
    time.advance(Duration.ofSeconds(10)); // fails
    for (Duration retry : List.of(Duration.ofMillis(200), Duration.ofMillis(400), Duration.ofMillis(800))) {
      long before = attempts();
      time.advance(retry.minusMillis(1));
      assertThat(attempts()).isEqualTo(before);
      time.advance(Duration.ofMillis(1));
      assertThat(attempts()).isEqualTo(before + 1);
    }
    assertThat(leaseUpdates()).isEqualTo(1); // the third retry got through
    Duration renewedAt = Duration.ofMillis(10_000 + 200 + 400 + 800);
    assertThat(lease().getSpec().getRenewTime().toInstant()).isEqualTo(at(renewedAt).toInstant());
    // then every 10 s again
    time.advance(Duration.ofMillis(9_999));
    assertThat(leaseUpdates()).isEqualTo(1);
    time.advance(Duration.ofMillis(1));
    assertThat(leaseUpdates()).isEqualTo(2);
  }

  @Test
  void aLeaseNotRenewedForItsDurationIsAProblem() {
    agent.start();
    time.runDue();
    server.failNext(Verb.UPDATE, "leases", 1000, 503);
    time.advance(Duration.ofSeconds(40));
    assertThat(agent.problem()).isEmpty();
    time.advance(Duration.ofSeconds(1));
    assertThat(agent.problem()).get().asString().startsWith("Lease kube-node-lease/node-a not renewed since ");
  }

  private long attempts() {
    return server.writes().stream().filter(w -> w.resource().equals("leases") && w.verb() == Verb.UPDATE).count();
  }
}
