package dev.nodelet.node.internal;

import static dev.nodelet.node.internal.NodeRig.NODE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** The Lease in kube-node-lease against the embedded API server: cadence, conflicts, retries. */
class NodeLeaseTest {

  @AutoClose
  private final NodeRig rig = new NodeRig();
  private final NodeAgent agent = rig.closing(rig.agent(NodeSettings.defaults(), () -> Facts.of(4)).build());

  private Lease lease() {
    return rig.client.leases().inNamespace("kube-node-lease").withName(NODE).get();
  }

  private ZonedDateTime at(Duration sinceStart) {
    return ZonedDateTime.ofInstant(DrivenTime.START.plus(sinceStart), ZoneOffset.UTC);
  }

  private long leaseUpdates() {
    return rig.server.writes().stream().filter(w -> w.resource().equals("leases") && w.verb() == Verb.UPDATE
        && w.succeeded()).count();
  }

  @Test
  void createsTheLeaseHeldByTheNodeAndOwnedByIt() {
    agent.start();
    rig.time.runDue();

    Lease lease = lease();
    assertThat(lease.getSpec().getHolderIdentity()).isEqualTo(NODE);
    assertThat(lease.getSpec().getLeaseDurationSeconds()).isEqualTo(40);
    assertThat(lease.getSpec().getRenewTime().toInstant()).isEqualTo(DrivenTime.START);
    String uid = rig.client.nodes().withName(NODE).get().getMetadata().getUid();
    assertThat(lease.getMetadata().getOwnerReferences()).extracting(OwnerReference::getKind,
        OwnerReference::getName, OwnerReference::getUid).containsExactly(
            org.assertj.core.groups.Tuple.tuple("Node", NODE, uid));
    assertThat(agent.problem()).isEmpty();
  }

  @Test
  void renewsEveryTenSeconds() {
    agent.start();
    rig.time.runDue();
    for (int renewal = 1; renewal <= 3; renewal++) {
      rig.time.advance(Duration.ofMillis(9_999));
      assertThat(leaseUpdates()).as("renewals before %d x 10 s", renewal).isEqualTo(renewal - 1);
      rig.time.advance(Duration.ofMillis(1));
      assertThat(leaseUpdates()).isEqualTo(renewal);
      assertThat(lease().getSpec().getRenewTime().toInstant()).isEqualTo(at(Duration.ofSeconds(10L * renewal))
          .toInstant());
    }
  }

  @Test
  void aConflictIsReadAndUpdatedAgainAtOnce() {
    agent.start();
    rig.time.runDue();
    // another writer moved the Lease on: the node's copy is stale
    Lease theirs = lease();
    rig.client.leases().inNamespace("kube-node-lease").resource(new LeaseBuilder(theirs).editSpec()
        .withHolderIdentity("someone-else").endSpec().build()).update();
    rig.server.clearWrites();

    rig.time.advance(Duration.ofSeconds(10));

    assertThat(rig.server.writes()).filteredOn(w -> w.resource().equals("leases"))
        .extracting(w -> w.verb() + " " + w.status()).containsExactly("UPDATE 409", "UPDATE 200");
    Lease lease = lease();
    assertThat(lease.getSpec().getHolderIdentity()).isEqualTo(NODE);
    assertThat(lease.getSpec().getRenewTime().toInstant()).isEqualTo(at(Duration.ofSeconds(10)).toInstant());
  }

  @Test
  void aFailedRenewalIsRetriedAfter200MillisecondsDoublingThenTheIntervalAgain() {
    agent.start();
    rig.time.runDue();
    rig.server.failNext(Verb.UPDATE, "leases", 3, 500);
    rig.time.advance(Duration.ofSeconds(10)); // fails
    for (Duration retry : List.of(Duration.ofMillis(200), Duration.ofMillis(400), Duration.ofMillis(800))) {
      long before = attempts();
      rig.time.advance(retry.minusMillis(1));
      assertThat(attempts()).isEqualTo(before);
      rig.time.advance(Duration.ofMillis(1));
      assertThat(attempts()).isEqualTo(before + 1);
    }
    assertThat(leaseUpdates()).isEqualTo(1); // the third retry got through
    Duration renewedAt = Duration.ofMillis(10_000 + 200 + 400 + 800);
    assertThat(lease().getSpec().getRenewTime().toInstant()).isEqualTo(at(renewedAt).toInstant());
    // then every 10 s again
    rig.time.advance(Duration.ofMillis(9_999));
    assertThat(leaseUpdates()).isEqualTo(1);
    rig.time.advance(Duration.ofMillis(1));
    assertThat(leaseUpdates()).isEqualTo(2);
  }

  @Test
  void aLeaseNotRenewedForItsDurationIsAProblem() {
    agent.start();
    rig.time.runDue();
    rig.server.failNext(Verb.UPDATE, "leases", 1000, 503);
    rig.time.advance(Duration.ofSeconds(40));
    assertThat(agent.problem()).isEmpty();
    rig.time.advance(Duration.ofSeconds(1));
    assertThat(agent.problem()).get().asString().startsWith("Lease kube-node-lease/node-a not renewed since ");
  }

  private long attempts() {
    return rig.server.writes().stream().filter(w -> w.resource().equals("leases") && w.verb() == Verb.UPDATE).count();
  }
}
