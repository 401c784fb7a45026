package dev.nodelet.dra.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.runtime.ControllerOptions;
import dev.nodelet.dra.runtime.ManualScheduler;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The slices a driver publishes itself (a kubelet plugin) against the embedded API server: the controller never
 * changes or deletes a slice it did not write, whether the slice comes before the driver registers, after it, or
 * before the controller starts.
 */
class SelfPublishedSlicesTest {

  private static final String NODE = "node-a";
  private static final String PLUGIN = "kubelet.example.com";
  private static final String SLICE = NODE + "-" + PLUGIN;
  private static final Duration GRACE = ControllerOptions.DEFAULTS.gracePeriod();

  private EmbeddedApiServer server;
  private KubernetesClient admin;
  private String nodeUid;
  private NodeResourcesController controller;
  private final ManualScheduler time = new ManualScheduler();
  private final WorkerBarrier barrier = new WorkerBarrier(() -> server, NODE);

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
    admin = server.newClient();
    nodeUid = admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build())
        .create().getMetadata().getUid();
    controller = NodeResourcesController.builder(admin, NODE).nodeUid(() -> Optional.of(nodeUid)).scheduler(time)
        .build();
  }

  @AfterEach
  void stop() {
    controller.close();
    admin.close();
    server.close();
  }

  /** What the Go kubeletplugin helper writes: owned by the Node too, but without Nodelet's label. */
  private ResourceSlice publishOwnSlice() {
    return admin.resources(ResourceSlice.class).resource(new ResourceSliceBuilder()
        .withNewMetadata().withName(SLICE).addNewOwnerReference().withApiVersion("v1").withKind("Node")
        .withName(NODE).withUid(nodeUid).withController(true).endOwnerReference().endMetadata()
        .withNewSpec().withDriver(PLUGIN).withNodeName(NODE).withNewPool().withName(NODE).withGeneration(1L)
        .withResourceSliceCount(1L).endPool().withDevices(new DeviceBuilder().withName("dev-0").build()).endSpec()
        .build()).create();
  }

  private void startPastTheStartUpGracePeriod() {
    controller.start();
    barrier.addTo(controller);
    time.advance(GRACE);
    barrier.pass();
  }

  /** The slice is there as the driver wrote it, and the controller wrote nothing of the driver's. */
  private void assertUntouched(ResourceSlice published) {
    barrier.pass();
    ResourceSlice now = admin.resources(ResourceSlice.class).withName(SLICE).get();
    assertThat(now).as("the driver's own slice").isNotNull();
    assertThat(now.getMetadata().getResourceVersion()).isEqualTo(published.getMetadata().getResourceVersion());
    assertThat(server.writes()).noneMatch(w -> SLICE.equals(w.name()) && w.verb() != Verb.CREATE);
    assertThat(barrier.writesOf(PLUGIN)).isEmpty();
  }

  @Test
  void aSlicePublishedBeforeTheDriverRegistersIsNeverTouched() {
    startPastTheStartUpGracePeriod();
    ResourceSlice published = publishOwnSlice();
    await().until(() -> controller.slices().stream().anyMatch(s -> s.name().equals(SLICE)));
    assertUntouched(published);
    assertThat(controller.driverStatuses()).as("not the controller's: not shown as leaving")
        .noneMatch(d -> d.driverName().equals(PLUGIN));

    TestDriver plugin = new TestDriver(PLUGIN);
    controller.addSelfPublished(plugin);
    time.advance(GRACE.multipliedBy(3));
    assertUntouched(published);
    assertThat(controller.driverStatuses()).anySatisfy(d -> {
      assertThat(d.driverName()).isEqualTo(PLUGIN);
      assertThat(d.state()).isEqualTo(DriverStatus.State.SELF_PUBLISHING);
    });
  }

  @Test
  void aSlicePublishedAfterTheDriverRegistersIsNeverTouched() {
    startPastTheStartUpGracePeriod();
    controller.addSelfPublished(new TestDriver(PLUGIN));
    barrier.pass();
    ResourceSlice published = publishOwnSlice();
    await().until(() -> controller.slices().stream().anyMatch(s -> s.name().equals(SLICE)));
    time.advance(GRACE.multipliedBy(3));
    assertUntouched(published);
  }

  @Test
  void aSliceThatWasThereBeforeTheControllerStartedOutlivesTheStartUpGracePeriod() {
    ResourceSlice published = publishOwnSlice();
    startPastTheStartUpGracePeriod();
    time.advance(GRACE.multipliedBy(3)); // the driver registers late, as a slowly starting one does
    assertUntouched(published);

    controller.addSelfPublished(new TestDriver(PLUGIN));
    time.advance(GRACE.multipliedBy(3));
    assertUntouched(published);
  }

  @Test
  void slicesOfADriverTheControllerPublishesDoNotIncludeAnotherWritersSlicesOfTheSameName() {
    startPastTheStartUpGracePeriod();
    ResourceSlice published = publishOwnSlice();
    TestDriver streaming = new TestDriver(PLUGIN);
    controller.addDriver(streaming);
    streaming.publish(List.of(new Pool("pool-a", List.of(new DeviceBuilder().withName("dev-1").build()))));
    await().until(() -> barrier.writesOf(PLUGIN).size() == 1);
    ResourceSlice own = admin.resources(ResourceSlice.class).withName(barrier.writesOf(PLUGIN).get(0).name()).get();
    assertThat(own.getMetadata().getLabels()).containsEntry(NodeSlices.MANAGED_BY, NodeSlices.NODELET);

    streaming.publish(List.of());
    await().until(() -> admin.resources(ResourceSlice.class).withName(own.getMetadata().getName()).get() == null);
    assertThat(admin.resources(ResourceSlice.class).withName(SLICE).get().getMetadata().getResourceVersion())
        .isEqualTo(published.getMetadata().getResourceVersion());
  }

  @Test
  void onceTheDriverIsGoneForTheGracePeriodItsSlicesAreWipedAsTheKubeletDoes() {
    startPastTheStartUpGracePeriod();
    TestDriver plugin = new TestDriver(PLUGIN);
    controller.addSelfPublished(plugin);
    ResourceSlice published = publishOwnSlice();
    controller.removeSelfPublished(plugin);
    time.advance(GRACE.minusSeconds(1));
    assertUntouched(published);

    time.advance(Duration.ofSeconds(1));
    await().until(() -> admin.resources(ResourceSlice.class).withName(SLICE).get() == null);
  }
}
