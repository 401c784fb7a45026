package dev.nodelet.node.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The node's status against the embedded API server: computed every 10 s, written on change or after 5 minutes. */
class NodeStatusTest {

  private static final String NODE = "node-a";

  private EmbeddedApiServer server;
  private KubernetesClient client;
  private final DrivenTime time = new DrivenTime();
  private final AtomicReference<HostFacts> facts = new AtomicReference<>(Facts.of(4));
  private final AtomicReference<Optional<String>> notReady = new AtomicReference<>(Optional.empty());
  private NodeAgent agent;

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
    client = server.newClient();
    agent = NodeAgent.builder(client, new NodeObjects.Identity(NODE, NODE), NodeSettings.defaults(), facts::get)
        .clock(time).timer(time.timer()).notReady(notReady::get).build();
    agent.start();
    time.runDue();
  }

  @AfterEach
  void stop() {
    agent.close();
    client.close();
    server.close();
  }

  private long statusWrites() {
    // after the create, every patch of the Node is a status write: its labels were in order
    return server.writes().stream().filter(w -> w.resource().equals("nodes") && w.verb() == Verb.PATCH).count();
  }

  private NodeCondition ready() {
    return NodeObjects.find(client.nodes().withName(NODE).get().getStatus(), "Ready").orElseThrow();
  }

  @Test
  void anUnchangedStatusIsWrittenOnlyEveryFiveMinutes() {
    assertThat(statusWrites()).as("the first report after registering").isEqualTo(1);
    long gets = server.requestCount(Verb.GET, "nodes");

    time.advance(Duration.ofSeconds(290));
    assertThat(statusWrites()).isEqualTo(1);
    assertThat(server.requestCount(Verb.GET, "nodes") - gets).as("computed every 10 s").isEqualTo(29);
    assertThat(ready().getLastHeartbeatTime()).isEqualTo("2026-11-28T10:00:00Z");

    time.advance(Duration.ofSeconds(10));
    assertThat(statusWrites()).isEqualTo(2);
    assertThat(ready().getLastHeartbeatTime()).isEqualTo("2026-11-28T10:05:00Z");
    assertThat(ready().getLastTransitionTime()).isEqualTo("2026-11-28T10:00:00Z");

    time.advance(Duration.ofSeconds(290));
    assertThat(statusWrites()).isEqualTo(2);
    time.advance(Duration.ofSeconds(10));
    assertThat(statusWrites()).isEqualTo(3);
  }

  @Test
  void aChangedStatusIsWrittenAtTheNextComputation() {
    time.advance(Duration.ofSeconds(25));
    facts.set(Facts.of(8)); // the JVM was given more processors
    time.advance(Duration.ofSeconds(4));
    assertThat(statusWrites()).isEqualTo(1);
    time.advance(Duration.ofSeconds(1));
    assertThat(statusWrites()).isEqualTo(2);
    var status = client.nodes().withName(NODE).get().getStatus();
    assertThat(status.getCapacity().get("cpu")).isEqualTo(new Quantity("8"));
    assertThat(status.getAllocatable().get("cpu")).isEqualTo(new Quantity("8"));
    assertThat(ready().getLastHeartbeatTime()).isEqualTo("2026-11-28T10:00:30Z");
    assertThat(ready().getLastTransitionTime()).as("Ready did not flip").isEqualTo("2026-11-28T10:00:00Z");
    time.advance(Duration.ofSeconds(60));
    assertThat(statusWrites()).isEqualTo(2);
  }

  @Test
  void readyMovesItsTransitionTimeOnlyWhenItFlips() {
    time.advance(Duration.ofSeconds(15));
    notReady.set(Optional.of("the pod runtime is not running"));
    time.advance(Duration.ofSeconds(5));
    NodeCondition down = ready();
    assertThat(down.getStatus()).isEqualTo("False");
    assertThat(down.getReason()).isEqualTo("KubeletNotReady");
    assertThat(down.getMessage()).isEqualTo("the pod runtime is not running");
    assertThat(down.getLastTransitionTime()).isEqualTo("2026-11-28T10:00:20Z");

    time.advance(Duration.ofSeconds(10));
    assertThat(statusWrites()).as("unchanged while not ready").isEqualTo(2);

    notReady.set(Optional.empty());
    time.advance(Duration.ofSeconds(10));
    NodeCondition up = ready();
    assertThat(up.getStatus()).isEqualTo("True");
    assertThat(up.getLastTransitionTime()).isEqualTo("2026-11-28T10:00:40Z");
    assertThat(up.getLastHeartbeatTime()).isEqualTo("2026-11-28T10:00:40Z");
    assertThat(NodeObjects.find(client.nodes().withName(NODE).get().getStatus(), "MemoryPressure").orElseThrow()
        .getLastTransitionTime()).as("the pressure conditions never flipped").isEqualTo("2026-11-28T10:00:00Z");
  }

  @Test
  void aStatusSomeoneElseChangedIsWrittenBack() {
    // the node lifecycle controller marks a node whose Lease lapsed Unknown; the node must say Ready again
    var node = client.nodes().withName(NODE).get();
    node.getStatus().getConditions().stream().filter(c -> c.getType().equals("Ready")).forEach(c -> {
      c.setStatus("Unknown");
      c.setReason("NodeStatusUnknown");
      c.setMessage("Kubelet stopped posting node status.");
      c.setLastTransitionTime("2026-11-28T10:00:05Z");
    });
    client.nodes().resource(node).subresource("status").update();
    time.advance(Duration.ofSeconds(10));
    assertThat(statusWrites()).isEqualTo(2);
    assertThat(ready().getStatus()).isEqualTo("True");
    assertThat(ready().getLastTransitionTime()).isEqualTo("2026-11-28T10:00:10Z");
  }
}
