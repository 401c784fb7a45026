package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Rejected pods fail with the kubelet's reason and never start. */
class PodAdmissionTest {

  @TempDir
  Path dir;
  PodsHarness h;

  @BeforeEach
  void start() throws Exception {
    h = new PodsHarness(dir);
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
  }

  @AfterEach
  void stop() throws Exception {
    h.close();
  }

  @Test
  void aPodBeyondTheNodesPodsCapacityIsOutOfpods() throws Exception {
    h.client.nodes().resource(new NodeBuilder().withNewMetadata().withName(PodsHarness.NODE).endMetadata()
        .withNewStatus().addToAllocatable("pods", new io.fabric8.kubernetes.api.model.Quantity("1"))
        .addNewAddress().withType("InternalIP").withAddress("10.0.0.7").endAddress().endStatus().build()).create();
    h.run(PodLifecycleTest.pod("p", "mvn:org.example/hello/1.0.0"));
    h.run(PodLifecycleTest.pod("q", "mvn:org.example/hello/1.0.0"));
    assertThat(h.status("p").getPhase()).isEqualTo("Running");
    assertThat(h.status("p").getHostIP()).isEqualTo("10.0.0.7");
    var rejected = h.status("q");
    assertThat(rejected.getPhase()).isEqualTo("Failed");
    assertThat(rejected.getReason()).isEqualTo("OutOfpods");
    assertThat(rejected.getMessage()).isEqualTo("Node didn't have enough resource: pods, requested: 1, used: 1, "
        + "capacity: 1");
    assertThat(h.felix.context().getBundle("nodelet-pod:default/q/c0")).isNull();

    h.server.clearWrites();
    h.feed("q");
    assertThat(h.podWrites()).isEmpty(); // a rejected pod stays rejected, without writes
  }

  @Test
  void aPodNotToleratingANoExecuteTaintFailsWithTaint() throws Exception {
    h.client.nodes().resource(new NodeBuilder().withNewMetadata().withName(PodsHarness.NODE).endMetadata()
        .withNewSpec().addNewTaint().withKey("nodelet.dev/untrusted").withValue("true").withEffect("NoExecute")
        .endTaint().endSpec().build()).create();
    h.run(PodLifecycleTest.pod("p", "mvn:org.example/hello/1.0.0"));
    assertThat(h.status("p").getPhase()).isEqualTo("Failed");
    assertThat(h.status("p").getReason()).isEqualTo("Taint");
    assertThat(h.felix.context().getBundle("nodelet-pod:default/p/c0")).isNull();

    Pod tolerating = PodLifecycleTest.pod("q", "mvn:org.example/hello/1.0.0");
    tolerating.getSpec().setTolerations(java.util.List.of(new io.fabric8.kubernetes.api.model.Toleration(
        "NoExecute", "nodelet.dev/untrusted", "Exists", null, null)));
    h.run(tolerating);
    assertThat(h.status("q").getPhase()).isEqualTo("Running");
  }

  @Test
  void aPodWhoseCpuRequestTheRunningPodsLeaveNoRoomForIsOutOfcpu() throws Exception {
    h.client.nodes().resource(new NodeBuilder().withNewMetadata().withName(PodsHarness.NODE).endMetadata()
        .withNewStatus().addToAllocatable("cpu", new io.fabric8.kubernetes.api.model.Quantity("2"))
        .endStatus().build()).create();
    Pod p = PodLifecycleTest.pod("p", "mvn:org.example/hello/1.0.0");
    p.getSpec().getContainers().get(0).setResources(new io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder()
        .addToRequests("cpu", new io.fabric8.kubernetes.api.model.Quantity("1500m")).build());
    h.run(p);
    Pod q = PodLifecycleTest.pod("q", "mvn:org.example/hello/1.0.0");
    q.getSpec().getContainers().get(0).setResources(new io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder()
        .addToRequests("cpu", new io.fabric8.kubernetes.api.model.Quantity("1")).build());
    h.run(q);
    assertThat(h.status("p").getPhase()).isEqualTo("Running");
    assertThat(h.status("q").getPhase()).isEqualTo("Failed");
    assertThat(h.status("q").getReason()).isEqualTo("OutOfcpu");
    assertThat(h.status("q").getMessage()).isEqualTo("Node didn't have enough resource: cpu, requested: 1000, "
        + "used: 1500, capacity: 2000");
    assertThat(h.felix.context().getBundle("nodelet-pod:default/q/c0")).isNull();
  }

  @Test
  void aPodWhoseNodeSelectorTheNodeDoesNotMatchFailsWithNodeAffinity() throws Exception {
    h.client.nodes().resource(new NodeBuilder().withNewMetadata().withName(PodsHarness.NODE)
        .addToLabels("zone", "a").endMetadata().build()).create();
    Pod p = PodLifecycleTest.pod("p", "mvn:org.example/hello/1.0.0");
    p.getSpec().setNodeSelector(java.util.Map.of("zone", "b"));
    h.run(p);
    assertThat(h.status("p").getPhase()).isEqualTo("Failed");
    assertThat(h.status("p").getReason()).isEqualTo("NodeAffinity");
    assertThat(h.felix.context().getBundle("nodelet-pod:default/p/c0")).isNull();
  }
}
