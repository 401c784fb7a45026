package dev.nodelet.dra.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.configuration.RecordingPublisher;
import dev.nodelet.dra.DriverStatus.State;
import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.SliceSummary;
import dev.nodelet.dra.internal.NodeResourcesController;
import dev.nodelet.dra.runtime.ControllerOptions;
import dev.nodelet.dra.runtime.ManualScheduler;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.testing.FixedNodeIdentity;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.osgi.util.converter.Converters;

/** The read-only status of the controller and the {@code nodelet:drivers} / {@code nodelet:slices} commands. */
class DraStatusTest {

  private static final String NODE = "node-a";
  private static final String GPU = "gpu.example.com";
  private static final String OLD = "old.example.com";
  private static final Instant NOW = Instant.parse("2025-01-02T03:04:05Z");
  private static final ControllerOptions OPTIONS = ControllerOptions.DEFAULTS;

  private EmbeddedApiServer server;
  private KubernetesClient client;
  private String nodeUid;
  private final ManualScheduler time = new ManualScheduler();
  private NodeResourcesController controller;

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
    client = server.newClient();
    nodeUid = client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build())
        .create().getMetadata().getUid();
  }

  @AfterEach
  void stop() {
    if (controller != null) {
      controller.close();
    }
    client.close();
    server.close();
  }

  private NodeResourcesController started() {
    controller = NodeResourcesController.builder(client, NODE).nodeUid(() -> Optional.of(nodeUid)).scheduler(time)
        .options(OPTIONS).random(() -> 0.0).clock(Clock.fixed(NOW, ZoneOffset.UTC)).build();
    controller.start();
    return controller;
  }

  private DriverStatus status(String driver) {
    return controller.driverStatuses().stream().filter(s -> s.driverName().equals(driver)).findFirst()
        .orElseThrow(() -> new AssertionError("no status of " + driver + " in " + controller.driverStatuses()));
  }

  private static Pool pool(String name, int devices) {
    return new Pool(name, IntStream.range(0, devices)
        .mapToObj(i -> new DeviceBuilder().withName(String.format("dev-%03d", i)).build()).toList());
  }

  /** A slice the controller wrote in an earlier run. */
  private void storedSlice(String name, String node, String driver) {
    client.resources(ResourceSlice.class).resource(new ResourceSliceBuilder()
        .withNewMetadata().withName(name).addToLabels(NodeSlices.MANAGED_BY, NodeSlices.NODELET).endMetadata()
        .withNewSpec().withDriver(driver).withNodeName(node).withNewPool().withName("p").withGeneration(4L)
        .withResourceSliceCount(1L).endPool().endSpec().build()).create();
  }

  @Test
  void theStatusFollowsTheDriverThroughSnapshotsFailuresAndItsDeparture() {
    started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    assertThat(status(GPU)).isEqualTo(new DriverStatus(GPU, State.MONITORING, Optional.empty(), Optional.empty(),
        Duration.ZERO, Duration.ZERO));

    gpu.publish(List.of(pool("pool-a", 2)));
    assertThat(status(GPU).lastSnapshot()).contains(NOW);
    assertThat(status(GPU).lastError()).isEmpty();

    // the first retry comes at once (the kubelet's backoff starts at zero), the second after the initial delay
    gpu.fail(new IllegalStateException("stream broke"), true);
    assertThat(status(GPU).state()).isEqualTo(State.BACKING_OFF);
    assertThat(status(GPU).lastError()).contains("java.lang.IllegalStateException: stream broke");
    assertThat(status(GPU).backoff()).isZero();
    time.advance(Duration.ZERO);
    assertThat(status(GPU).state()).isEqualTo(State.MONITORING);
    assertThat(status(GPU).backoff()).isEqualTo(OPTIONS.monitorBackoffInitial());
    gpu.fail(new IllegalStateException("again"), true);
    assertThat(status(GPU).state()).isEqualTo(State.BACKING_OFF);
    assertThat(status(GPU).backoff()).isEqualTo(OPTIONS.monitorBackoffInitial());
    time.advance(OPTIONS.monitorBackoffInitial());
    assertThat(status(GPU).state()).isEqualTo(State.MONITORING);
    assertThat(status(GPU).lastError()).as("kept until the next accepted snapshot")
        .contains("java.lang.IllegalStateException: again");

    // a rejected snapshot is an error too, and keeps the time of the last accepted one
    gpu.publish(List.of(new Pool("pool-a", List.of(new DeviceBuilder().withName("Not_A_Label").build()))));
    assertThat(status(GPU).lastError()).hasValueSatisfying(e -> assertThat(e).contains("invalid resources"));
    gpu.publish(List.of(pool("pool-a", 1)));
    assertThat(status(GPU).lastError()).isEmpty();
    assertThat(status(GPU).lastSnapshot()).contains(NOW);

    gpu.complete();
    assertThat(status(GPU).state()).isEqualTo(State.STOPPED);

    controller.removeDriver(gpu);
    assertThat(status(GPU)).isEqualTo(new DriverStatus(GPU, State.LEAVING, Optional.of(NOW), Optional.empty(),
        Duration.ZERO, OPTIONS.gracePeriod()));
    time.advance(Duration.ofSeconds(10));
    assertThat(status(GPU).gracePeriodLeft()).isEqualTo(OPTIONS.gracePeriod().minusSeconds(10));
    time.advance(OPTIONS.gracePeriod());
    await().until(() -> controller.driverStatuses().isEmpty());
  }

  @Test
  void slicesOfAnUnregisteredDriverAreLeavingDuringTheStartUpGracePeriod() {
    storedSlice(NODE + "-" + OLD + "-x", NODE, OLD);
    storedSlice("node-b-" + OLD + "-y", "node-b", OLD);
    started();
    await().until(() -> !controller.driverStatuses().isEmpty());
    assertThat(controller.driverStatuses()).containsExactly(new DriverStatus(OLD, State.LEAVING, Optional.empty(),
        Optional.empty(), Duration.ZERO, OPTIONS.gracePeriod()));
  }

  @Test
  void slicesComeFromTheInformerCacheOfThisNodeOnly() {
    storedSlice("node-b-" + GPU + "-other", "node-b", GPU);
    started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    gpu.publish(List.of(pool("pool-b", 1), pool("pool-a", 300)));

    await().until(() -> controller.slices().size() == 4);
    List<SliceSummary> slices = controller.slices();
    assertThat(slices).allSatisfy(s -> {
      assertThat(s.name()).startsWith(NODE + "-" + GPU + "-");
      assertThat(s.driver()).isEqualTo(GPU);
      assertThat(s.generation()).isEqualTo(1L);
    });
    assertThat(slices).extracting(SliceSummary::pool).containsExactly("pool-a", "pool-a", "pool-a", "pool-b");
    assertThat(slices).extracting(SliceSummary::devices).containsExactlyInAnyOrder(128, 128, 44, 1);
  }

  /** A registration that failed shows among the drivers, with its reason, whatever reports it. */
  @Test
  void failedRegistrationsAreListedWithTheDrivers() {
    DraConfiguration config = Converters.standardConverter().convert(Map.of()).to(DraConfiguration.class);
    NodeIdentity identity = FixedNodeIdentity.named(NODE).withUid(nodeUid);
    ReflectorEngine reflectors = ReflectorEngine.builder(client).build();
    DraComponent component = new DraComponent(new RecordingPublisher(), client, reflectors, identity, config, Map.of());
    DriverStatus refused = new DriverStatus("a.example.com", State.NOT_REGISTERED, Optional.empty(),
        Optional.of("plugin \"a.example.com\" at /reg/a-reg.sock supports [1.0.0] but Nodelet speaks one of [...]"),
        Duration.ZERO, Duration.ZERO);
    DriverStatus silent = new DriverStatus("z-reg.sock", State.NOT_REGISTERED, Optional.empty(),
        Optional.of("registration socket /reg/z-reg.sock did not answer"), Duration.ofSeconds(4), Duration.ZERO);
    dev.nodelet.dra.RegistrationFailures folder = () -> List.of(silent, refused);
    try {
      component.addSelfPublished(new TestDriver(GPU));
      component.addRegistrationFailures(folder);
      assertThat(component.drivers()).extracting(DriverStatus::driverName, DriverStatus::state).containsExactly(
          org.assertj.core.groups.Tuple.tuple("a.example.com", State.NOT_REGISTERED),
          org.assertj.core.groups.Tuple.tuple(GPU, State.SELF_PUBLISHING),
          org.assertj.core.groups.Tuple.tuple("z-reg.sock", State.NOT_REGISTERED));
      assertThat(component.drivers()).contains(refused, silent);

      component.removeRegistrationFailures(folder);
      assertThat(component.drivers()).extracting(DriverStatus::driverName).containsExactly(GPU);
    } finally {
      component.deactivate();
      reflectors.close();
    }
  }

  /** The status service of the real component, with its own threads and the default configuration. */
  @Test
  void theComponentReportsEachDriverAndSlice() throws IOException {
    DraConfiguration config = Converters.standardConverter().convert(Map.of()).to(DraConfiguration.class);
    NodeIdentity identity = FixedNodeIdentity.named(NODE).withUid(nodeUid);
    ReflectorEngine reflectors = ReflectorEngine.builder(client).build();
    DraComponent component = new DraComponent(new RecordingPublisher(), client, reflectors, identity, config, Map.of());
    try {
      assertThat(component.drivers()).isEmpty();
      assertThat(component.slices()).isEmpty();

      TestDriver gpu = new TestDriver(GPU).snapshotOnSubscribe(List.of(pool("pool-a", 3)));
      component.addDriver(gpu);
      await().until(() -> component.slices().size() == 1);
      SliceSummary slice = component.slices().get(0);
      assertThat(slice.name()).startsWith(NODE + "-" + GPU + "-");
      assertThat(List.of(slice.driver(), slice.pool(), slice.generation(), slice.devices()))
          .containsExactly(GPU, "pool-a", 1L, 3);

      gpu.fail(new IllegalStateException("stream\nbroke"), false);
      assertThat(component.drivers()).singleElement().satisfies(driver -> {
        assertThat(driver.driverName()).isEqualTo(GPU);
        assertThat(driver.state()).isEqualTo(State.STOPPED);
        assertThat(driver.lastSnapshot()).hasValueSatisfying(t -> assertThat(t).isBeforeOrEqualTo(Instant.now()));
        assertThat(driver.backoff()).isZero();
        assertThat(driver.gracePeriodLeft()).isZero();
        assertThat(driver.lastError()).hasValue("java.lang.IllegalStateException: stream\nbroke");
      });

      component.removeDriver(gpu);
      assertThat(component.drivers()).singleElement().satisfies(driver -> {
        assertThat(driver.state()).isEqualTo(State.LEAVING);
        assertThat(driver.backoff()).isZero();
        assertThat(driver.gracePeriodLeft()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(30));
        assertThat(driver.lastError()).hasValue("java.lang.IllegalStateException: stream\nbroke");
      });
    } finally {
      component.deactivate();
      reflectors.close();
    }
  }
}
