package dev.nodelet.node.internal;

import static dev.nodelet.node.internal.NodeRig.NODE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The node's status against the embedded API server: computed every 10 s, written on change or after 5 minutes. */
class NodeStatusTest {

  @AutoClose
  private final NodeRig rig = new NodeRig();
  private final AtomicReference<HostFacts> facts = new AtomicReference<>(Facts.of(4));
  private final AtomicReference<Optional<String>> notReady = new AtomicReference<>(Optional.empty());
  private NodeAgent agent;

  @BeforeEach
  void start() {
    agent = rig.closing(rig.agent(NodeSettings.defaults(), facts::get).notReady(notReady::get).build());
    agent.start();
    rig.time.runDue();
  }

  private long statusWrites() {
    // after the create, every patch of the Node is a status write: its labels were in order
    return rig.server.writes().stream().filter(w -> w.resource().equals("nodes") && w.verb() == Verb.PATCH).count();
  }

  private NodeCondition ready() {
    return NodeObjects.find(rig.client.nodes().withName(NODE).get().getStatus(), "Ready").orElseThrow();
  }

  @Test
  void anUnchangedStatusIsWrittenOnlyEveryFiveMinutes() {
    assertThat(statusWrites()).as("the first report after registering").isEqualTo(1);
    long gets = rig.server.requestCount(Verb.GET, "nodes");

    rig.time.advance(Duration.ofSeconds(290));
    assertThat(statusWrites()).isEqualTo(1);
    assertThat(rig.server.requestCount(Verb.GET, "nodes") - gets).as("computed every 10 s").isEqualTo(29);
    assertThat(ready().getLastHeartbeatTime()).isEqualTo("2026-11-28T10:00:00Z");

    rig.time.advance(Duration.ofSeconds(10));
    assertThat(statusWrites()).isEqualTo(2);
    assertThat(ready().getLastHeartbeatTime()).isEqualTo("2026-11-28T10:05:00Z");
    assertThat(ready().getLastTransitionTime()).isEqualTo("2026-11-28T10:00:00Z");

    rig.time.advance(Duration.ofSeconds(290));
    assertThat(statusWrites()).isEqualTo(2);
    rig.time.advance(Duration.ofSeconds(10));
    assertThat(statusWrites()).isEqualTo(3);
  }

  @Test
  void aChangedStatusIsWrittenAtTheNextComputation() {
    rig.time.advance(Duration.ofSeconds(25));
    facts.set(Facts.of(8)); // the JVM was given more processors
    rig.time.advance(Duration.ofSeconds(4));
    assertThat(statusWrites()).isEqualTo(1);
    rig.time.advance(Duration.ofSeconds(1));
    assertThat(statusWrites()).isEqualTo(2);
    var status = rig.client.nodes().withName(NODE).get().getStatus();
    assertThat(status.getCapacity().get("cpu")).isEqualTo(new Quantity("8"));
    assertThat(status.getAllocatable().get("cpu")).isEqualTo(new Quantity("8"));
    assertThat(ready().getLastHeartbeatTime()).isEqualTo("2026-11-28T10:00:30Z");
    assertThat(ready().getLastTransitionTime()).as("Ready did not flip").isEqualTo("2026-11-28T10:00:00Z");
    rig.time.advance(Duration.ofSeconds(60));
    assertThat(statusWrites()).isEqualTo(2);
  }

  @Test
  void readyMovesItsTransitionTimeOnlyWhenItFlips() {
    rig.time.advance(Duration.ofSeconds(15));
    notReady.set(Optional.of("the pod runtime is not running"));
    rig.time.advance(Duration.ofSeconds(5));
    NodeCondition down = ready();
    assertThat(down.getStatus()).isEqualTo("False");
    assertThat(down.getReason()).isEqualTo("KubeletNotReady");
    assertThat(down.getMessage()).isEqualTo("the pod runtime is not running");
    assertThat(down.getLastTransitionTime()).isEqualTo("2026-11-28T10:00:20Z");

    rig.time.advance(Duration.ofSeconds(10));
    assertThat(statusWrites()).as("unchanged while not ready").isEqualTo(2);

    notReady.set(Optional.empty());
    rig.time.advance(Duration.ofSeconds(10));
    NodeCondition up = ready();
    assertThat(up.getStatus()).isEqualTo("True");
    assertThat(up.getLastTransitionTime()).isEqualTo("2026-11-28T10:00:40Z");
    assertThat(up.getLastHeartbeatTime()).isEqualTo("2026-11-28T10:00:40Z");
    assertThat(NodeObjects.find(rig.client.nodes().withName(NODE).get().getStatus(), "MemoryPressure").orElseThrow()
        .getLastTransitionTime()).as("the pressure conditions never flipped").isEqualTo("2026-11-28T10:00:00Z");
  }

  @Test
  void aStatusSomeoneElseChangedIsWrittenBack() {
    // the node lifecycle controller marks a node whose Lease lapsed Unknown; the node must say Ready again
    var node = rig.client.nodes().withName(NODE).get();
    node.getStatus().getConditions().stream().filter(c -> c.getType().equals("Ready")).forEach(c -> {
      c.setStatus("Unknown");
      c.setReason("NodeStatusUnknown");
      c.setMessage("Kubelet stopped posting node status.");
      c.setLastTransitionTime("2026-11-28T10:00:05Z");
    });
    rig.client.nodes().resource(node).subresource("status").update();
    rig.time.advance(Duration.ofSeconds(10));
    assertThat(statusWrites()).isEqualTo(2);
    assertThat(ready().getStatus()).isEqualTo("True");
    assertThat(ready().getLastTransitionTime()).isEqualTo("2026-11-28T10:00:10Z");
  }
}
