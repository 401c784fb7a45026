package dev.nodelet.node.internal;

import static dev.nodelet.node.internal.NodeRig.NODE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.testing.apiserver.RecordedWrite;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Taint;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** Registration against the embedded API server: create, adopt, back-off. */
class NodeRegistrationTest {

  @AutoClose
  private final NodeRig rig = new NodeRig();
  private NodeAgent agent;

  private NodeAgent agent(NodeSettings settings) {
    agent = rig.closing(rig.agent(settings, () -> Facts.of(4)).build());
    agent.start();
    return agent;
  }

  private static NodeSettings withLabels(Map<String, String> labels) {
    NodeSettings d = NodeSettings.defaults();
    return new NodeSettings(true, labels, d.taints(), d.maxPods(), d.kubeletPort(), "", "", d.reservedCpu(),
        d.reservedMemory(), "");
  }

  @Test
  void createsTheNodeWithItsLabelsTaintAndStatus() {
    agent(withLabels(Map.of("zone", "edge-1")));
    rig.time.runDue();

    Node node = rig.client.nodes().withName(NODE).get();
    assertThat(node.getMetadata().getLabels()).containsExactlyInAnyOrderEntriesOf(Map.of(
        "kubernetes.io/hostname", NODE, "kubernetes.io/os", "linux", "kubernetes.io/arch", "amd64",
        "zone", "edge-1"));
    assertThat(node.getSpec().getTaints()).extracting(Taint::getKey, Taint::getValue, Taint::getEffect)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("nodelet.dev/bundles", "true", "NoSchedule"));
    assertThat(node.getStatus().getConditions()).extracting(NodeCondition::getType, NodeCondition::getStatus,
        NodeCondition::getReason).containsExactly(
            org.assertj.core.groups.Tuple.tuple("MemoryPressure", "False", "KubeletHasSufficientMemory"),
            org.assertj.core.groups.Tuple.tuple("DiskPressure", "False", "KubeletHasNoDiskPressure"),
            org.assertj.core.groups.Tuple.tuple("PIDPressure", "False", "KubeletHasSufficientPID"),
            org.assertj.core.groups.Tuple.tuple("Ready", "True", "KubeletReady"));
    NodeCondition ready = node.getStatus().getConditions().get(3);
    assertThat(ready.getMessage()).isEqualTo("kubelet is posting ready status");
    assertThat(ready.getLastHeartbeatTime()).isEqualTo("2026-11-28T10:00:00Z");
    assertThat(ready.getLastTransitionTime()).isEqualTo("2026-11-28T10:00:00Z");
    assertThat(node.getStatus().getCapacity()).containsExactlyInAnyOrderEntriesOf(Map.of(
        "cpu", new Quantity("4"), "memory", new Quantity("4194304Ki"), "pods", new Quantity("110"),
        "ephemeral-storage", new Quantity("104857600Ki")));
    assertThat(node.getStatus().getAllocatable()).isEqualTo(node.getStatus().getCapacity());
    assertThat(node.getStatus().getAddresses()).extracting(a -> a.getType() + "=" + a.getAddress())
        .containsExactly("InternalIP=10.0.0.7", "Hostname=" + NODE);
    assertThat(node.getStatus().getDaemonEndpoints().getKubeletEndpoint().getPort()).isEqualTo(10250);
    var info = node.getStatus().getNodeInfo();
    assertThat(info.getKubeletVersion()).isEqualTo("v1.34.0-nodelet.0.2.0-SNAPSHOT");
    assertThat(info.getContainerRuntimeVersion()).isEqualTo("osgi://org.apache.felix.framework/7.0.5");
    assertThat(List.of(info.getOperatingSystem(), info.getArchitecture(), info.getOsImage(),
        info.getKernelVersion(), info.getMachineID(), info.getBootID())).containsExactly("linux", "amd64",
        "Debian GNU/Linux 12 (bookworm)", "6.1.0-test", "4c4c45440038", "boot-1");
    assertThat(agent.registered()).isTrue();
  }

  @Test
  void adoptsAnExistingNodeReconcilingOnlyItsDefaultLabels() {
    rig.client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE)
        .addToLabels("kubernetes.io/os", "windows").addToLabels("team", "a").endMetadata()
        .withNewSpec().addNewTaint().withKey("other").withEffect("NoExecute").endTaint().endSpec().build()).create();
    rig.server.clearWrites();

    agent(withLabels(Map.of("zone", "edge-1")));
    rig.time.runDue();

    Node node = rig.client.nodes().withName(NODE).get();
    // the default labels are the node's; the configured ones and the taints are set at creation only
    assertThat(node.getMetadata().getLabels()).containsExactlyInAnyOrderEntriesOf(Map.of(
        "kubernetes.io/hostname", NODE, "kubernetes.io/os", "linux", "kubernetes.io/arch", "amd64", "team", "a"));
    assertThat(node.getSpec().getTaints()).extracting(Taint::getKey).containsExactly("other");
    assertThat(node.getStatus().getConditions()).extracting(NodeCondition::getType).contains("Ready");
    assertThat(nodeWrites()).extracting(w -> w.verb() + " " + w.status()).containsExactly(
        "CREATE 409", "PATCH 200", "PATCH 200"); // the labels, then the status
  }

  @Test
  void adoptsANodeThatIsInOrderWithoutWritingItsLabels() {
    rig.client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE)
        .addToLabels(Map.of("kubernetes.io/hostname", NODE, "kubernetes.io/os", "linux", "kubernetes.io/arch",
            "amd64")).endMetadata().build()).create();
    rig.server.clearWrites();

    agent(NodeSettings.defaults());
    rig.time.runDue();

    assertThat(nodeWrites()).extracting(w -> w.verb() + " " + w.status()).containsExactly(
        "CREATE 409", "PATCH 200"); // the status only
    Node node = rig.client.nodes().withName(NODE).get();
    assertThat(node.getSpec() == null ? List.of() : node.getSpec().getTaints()).isEmpty();
  }

  @Test
  void neverTakesOverANodeThatAKubeletKeeps() {
    rig.client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata()
        .withNewStatus().withNewNodeInfo().withKubeletVersion("v1.34.1").endNodeInfo().endStatus().build()).create();
    rig.server.clearWrites();

    agent(NodeSettings.defaults());
    rig.time.runDue();
    rig.time.advance(Duration.ofSeconds(30));

    assertThat(agent.registered()).isFalse();
    assertThat(agent.problem()).get().asString().isEqualTo("node node-a not registered: node node-a is kept by a "
        + "kubelet (kubeletVersion v1.34.1): node mode does not take over a kubelet's node; give this Nodelet a node "
        + "name of its own (node.name of dev.nodelet.kube)");
    assertThat(rig.server.writes()).as("no Node written, no Lease touched").allSatisfy(w -> {
      assertThat(w.resource()).isEqualTo("nodes");
      assertThat(w.verb()).isEqualTo(Verb.CREATE);
    });
    assertThat(rig.client.leases().inNamespace("kube-node-lease").withName(NODE).get()).isNull();
  }

  @Test
  void retriesWithBackOffFrom100MillisecondsDoublingTo7Seconds() {
    rig.server.failNext(Verb.CREATE, "nodes", 9, 500);
    agent(NodeSettings.defaults());
    rig.time.runDue();
    assertThat(creates()).isEqualTo(1);

    List<Duration> delays = List.of(Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(400),
        Duration.ofMillis(800), Duration.ofMillis(1600), Duration.ofMillis(3200), Duration.ofMillis(6400),
        Duration.ofSeconds(7), Duration.ofSeconds(7));
    for (int retry = 0; retry < delays.size(); retry++) {
      assertThat(agent.registered()).isFalse();
      assertThat(agent.problem()).get().asString().startsWith("node node-a not registered");
      // the next attempt comes after exactly that delay, not a millisecond before
      rig.time.advance(delays.get(retry).minusMillis(1));
      assertThat(creates()).as("attempts before retry %d's delay", retry + 1).isEqualTo(retry + 1);
      rig.time.advance(Duration.ofMillis(1));
      assertThat(creates()).as("attempts after retry %d's delay", retry + 1).isEqualTo(retry + 2);
    }
    assertThat(agent.registered()).isTrue();
    assertThat(rig.client.nodes().withName(NODE).get()).isNotNull();
  }

  private long creates() {
    return nodeWrites().stream().filter(w -> w.verb() == Verb.CREATE).count();
  }

  private List<RecordedWrite> nodeWrites() {
    return rig.server.writes().stream().filter(w -> w.resource().equals("nodes")).toList();
  }
}
