package dev.nodelet.node.internal;

import static dev.nodelet.node.internal.NodeRig.NODE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.configuration.RecordingPublisher;
import dev.nodelet.kube.testing.FixedNodeIdentity;
import dev.nodelet.node.RegisteredNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.apache.felix.hc.api.Result;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.osgi.framework.Version;
import org.osgi.util.converter.Converters;

/**
 * The component on real threads against the embedded API server: off by default (no write at all), on with
 * {@code enabled=true}, an invalid configuration named and refused, and nothing left running once deactivated.
 */
class NodeComponentTest {

  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final NodeComponent.Environment ENVIRONMENT = new NodeComponent.Environment(
      "osgi://org.apache.felix.framework/7.0.5", "0.2.0-SNAPSHOT", Path.of(System.getProperty("java.io.tmpdir")));

  @AutoClose
  private final NodeRig rig = new NodeRig();
  private final RecordingPublisher registry = new RecordingPublisher();
  private NodeComponent component;

  private static NodeConfiguration config(Map<String, Object> properties) {
    return Converters.standardConverter().convert(properties).to(NodeConfiguration.class);
  }

  private NodeComponent component(Map<String, Object> properties) {
    component = new NodeComponent(registry, rig.client, FixedNodeIdentity.named(NODE), ENVIRONMENT, config(properties));
    rig.closing(component::deactivate);
    return component;
  }

  private Result lease() {
    return registry.healthChecks().get("nodelet-node-lease").execute();
  }

  @Test
  void offByDefaultItWritesNothing() {
    component(Map.of());
    assertThat(component.running()).isFalse();
    assertThat(lease().getStatus()).isEqualTo(Result.Status.OK);
    assertThat(lease().toString()).contains("node mode is off");
    assertThat(nodeThreads()).isZero();
    assertThat(rig.server.writes()).isEmpty();
    assertThat(registry.registered.keySet()).noneMatch(RegisteredNode.class::isInstance);
  }

  @Test
  void enabledItRegistersRenewsAndReportsThenStopsEverything() {
    component(Map.of("enabled", true, "labels", new String[] {"zone=edge-1"}, "taints", new String[] {""},
        "max.pods", 20, "kubelet.port", 10255, "address", "192.0.2.10", "reserved.cpu", "500m"));
    await().atMost(WAIT).until(() -> lease().getStatus() == Result.Status.OK);
    var node = rig.client.nodes().withName(NODE).get();
    assertThat(node.getMetadata().getLabels()).containsEntry("zone", "edge-1");
    assertThat(node.getSpec() == null ? java.util.List.of() : node.getSpec().getTaints()).as("taints=").isEmpty();
    assertThat(node.getStatus().getCapacity().get("pods").toString()).isEqualTo("20");
    assertThat(node.getStatus().getDaemonEndpoints().getKubeletEndpoint().getPort()).isEqualTo(10255);
    assertThat(node.getStatus().getAddresses().get(0).getAddress()).isEqualTo("192.0.2.10");
    int cpus = Runtime.getRuntime().availableProcessors();
    assertThat(node.getStatus().getAllocatable().get("cpu").toString()).isEqualTo((cpus * 1000 - 500) + "m");
    assertThat(node.getStatus().getNodeInfo().getContainerRuntimeVersion())
        .isEqualTo("osgi://org.apache.felix.framework/7.0.5");
    assertThat(rig.client.leases().inNamespace("kube-node-lease").withName(NODE).get()).isNotNull();
    assertThat(nodeThreads()).isEqualTo(2);
    RegisteredNode registered = (RegisteredNode) registry.registered.keySet().stream()
        .filter(RegisteredNode.class::isInstance).findFirst().orElseThrow();
    assertThat(registry.registered.get(registered)).containsEntry("nodelet.node.name", NODE);
    assertThat(registered.node()).get().extracting(n -> n.getStatus().getCapacity().get("pods").toString())
        .isEqualTo("20");

    component.deactivate();
    component = null;
    // the pool's workers end just after it is shut down
    await().atMost(WAIT).until(() -> nodeThreads() == 0);
    assertThat(registry.registered).isEmpty();
  }

  @Test
  void anInvalidConfigurationIsNamedAndTheLastGoodOneStays() {
    component(Map.of("enabled", true, "taints", new String[] {"nodelet.dev/bundles=true:NoScheduel"}));
    assertThat(registry.health()).startsWith("CRITICAL the node waits for a valid configuration dev.nodelet.node: "
        + "taints: the effect of \"nodelet.dev/bundles=true:NoScheduel\" must be NoSchedule, PreferNoSchedule or "
        + "NoExecute");
    assertThat(component.running()).isFalse();

    component.modified(config(Map.of("enabled", true)));
    assertThat(component.running()).isTrue();
    await().atMost(WAIT).until(() -> lease().getStatus() == Result.Status.OK);

    component.modified(config(Map.of("enabled", true, "max.pods", 0)));
    assertThat(component.running()).as("the last good configuration stays").isTrue();

    assertThat(registry.registered.keySet()).anyMatch(RegisteredNode.class::isInstance);
    component.modified(config(Map.of("enabled", false)));
    assertThat(component.running()).isFalse();
    assertThat(registry.registered.keySet()).as("RegisteredNode withdrawn").noneMatch(RegisteredNode.class::isInstance);
    await().atMost(WAIT).until(() -> nodeThreads() == 0);
  }

  @Test
  void everyBadValueIsNamed() {
    Map.of("labels", "labels: \"zone\" is not key=value",
        "labels2", "labels: kubernetes.io/os is set by the node itself; remove it",
        "labels3", "labels: \"-bad\" is not a valid key",
        "max.pods", "max.pods: must be between 1 and 10000, was 0",
        "kubelet.port", "kubelet.port: must be between 1 and 65535, was 70000",
        "reserved.memory", "reserved.memory: not a quantity such as 500m or 256Mi, was \"lots\"",
        "taints", "taints: \"bundles\" is not key=value:Effect or key:Effect").forEach((key, error) -> {
          Object value = switch (key) {
            case "labels" -> new String[] {"zone"};
            case "labels2" -> new String[] {"kubernetes.io/os=plan9"};
            case "labels3" -> new String[] {"-bad=x"};
            case "max.pods" -> 0;
            case "kubelet.port" -> 70000;
            case "reserved.memory" -> "lots";
            default -> new String[] {"bundles"};
          };
          RecordingPublisher publisher = new RecordingPublisher();
          NodeComponent waiting = new NodeComponent(publisher, rig.client, FixedNodeIdentity.named(NODE), ENVIRONMENT,
              config(Map.of("enabled", true, key.replaceAll("\\d$", ""), value)));
          assertThat(publisher.health()).as(key).contains("dev.nodelet.node: " + error);
          waiting.deactivate();
        });
    assertThat(rig.server.writes()).isEmpty();
  }

  @Test
  void theDefaultsAreThoseOfTheConfigurationAndAnUnchangedOneChangesNothing() {
    assertThat(NodeSettings.from(config(Map.of("enabled", true)))).isEqualTo(NodeSettings.defaults());
    component(Map.of("enabled", true));
    await().atMost(WAIT).until(() -> lease().getStatus() == Result.Status.OK);
    NodeAgent agent = component.agent();
    int registrations = registry.history.size();
    component.modified(config(Map.of("enabled", true, "taints", new String[] {"nodelet.dev/bundles=true:NoSchedule"})));
    assertThat(component.agent()).as("the same agent goes on").isSameAs(agent);
    assertThat(registry.history).hasSize(registrations);
    component.modified(config(Map.of("enabled", true, "max.pods", 50)));
    assertThat(component.agent()).as("a valid change replaces the agent").isNotSameAs(agent);
    await().atMost(WAIT).until(() -> rig.client.nodes().withName(NODE).get().getStatus().getCapacity().get("pods")
        .toString().equals("50"));
    assertThat(nodeThreads()).as("the old agent's threads are gone").isEqualTo(2);
  }

  @Test
  void theVersionIsWrittenAsMavenWritesIt() {
    assertThat(NodeComponent.version(new Version("0.2.0.SNAPSHOT"))).isEqualTo("0.2.0-SNAPSHOT");
    assertThat(NodeComponent.version(new Version("1.2.3"))).isEqualTo("1.2.3");
  }

  private static long nodeThreads() {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("nodelet-node-")
        && t.isAlive()).count();
  }

}
