package dev.nodelet.dra.internal;

import dev.nodelet.dra.runtime.ManualScheduler;
import dev.nodelet.dra.runtime.ControllerOptions;
import dev.nodelet.dra.internal.NodeResourcesController;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.Pool;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.RecordedWrite;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSetBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The controller against the embedded API server; its write record shows exactly what the controller wrote. */
class NodeResourcesControllerTest {

  private static final String NODE = "node-a";
  private static final String GPU = "gpu.example.com";
  private static final Duration GRACE = ControllerOptions.DEFAULTS.gracePeriod();

  private EmbeddedApiServer server;
  private KubernetesClient admin;
  private KubernetesClient client;
  private String nodeUid;
  private final ManualScheduler time = new ManualScheduler();
  private final List<NodeResourcesController> controllers = new ArrayList<>();
  private final WorkerBarrier barrier = new WorkerBarrier(() -> server, NODE);

  @BeforeEach
  void start() {
    serve(EmbeddedApiServer.builder());
  }

  private void serve(EmbeddedApiServer.Builder builder) {
    server = builder.build().start();
    admin = server.newClient();
    client = new KubernetesClientBuilder()
        .withConfig(new ConfigBuilder(server.clientConfig()).withWatchReconnectInterval(200).build()).build();
    nodeUid = admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build())
        .create().getMetadata().getUid();
    server.clearWrites();
  }

  @AfterEach
  void stop() {
    controllers.forEach(NodeResourcesController::close);
    client.close();
    admin.close();
    server.close();
  }

  private NodeResourcesController controller(Supplier<Optional<String>> uid, ControllerOptions options) {
    NodeResourcesController controller = NodeResourcesController.builder(client, NODE)
        .nodeUid(uid).scheduler(time).options(options).random(() -> 0.0).build();
    controllers.add(controller);
    return controller;
  }

  /** A started controller with the barrier driver registered and published. */
  private NodeResourcesController started() {
    NodeResourcesController controller = controller(() -> Optional.of(nodeUid), ControllerOptions.DEFAULTS);
    controller.start();
    barrier.addTo(controller);
    return controller;
  }

  private List<ResourceSlice> slicesOf(String driver) {
    return admin.resources(ResourceSlice.class).list().getItems().stream()
        .filter(s -> driver.equals(s.getSpec().getDriver()))
        .sorted(Comparator.comparing(s -> s.getSpec().getDevices().isEmpty() ? ""
            : s.getSpec().getDevices().get(0).getName()))
        .toList();
  }

  private static Device device(String name) {
    return new DeviceBuilder().withName(name)
        .addToAttributes("model", new DeviceAttribute(null, null, "a100", null))
        .build();
  }

  private static CounterSet counterSet(String name, String memory) {
    return new CounterSetBuilder().withName(name).addToCounters("memory", new Counter(new Quantity(memory))).build();
  }

  /** A device that takes 10Gi of the memory counter of the set. */
  private static Device partition(String name, String counterSet) {
    return new DeviceBuilder(device(name)).addNewConsumesCounter().withCounterSet(counterSet)
        .addToCounters("memory", new Counter(new Quantity("10Gi"))).endConsumesCounter().build();
  }

  private static Pool pool(String name, int devices) {
    return new Pool(name, IntStream.range(0, devices).mapToObj(i -> device(String.format("dev-%03d", i))).toList());
  }

  private static List<Verb> verbs(List<RecordedWrite> writes) {
    return writes.stream().map(RecordedWrite::verb).toList();
  }

  @Test
  void createsOneSlicePerPoolOwnedByTheNode() {
    started();
    TestDriver gpu = new TestDriver(GPU);
    controllersFirst().addDriver(gpu);
    gpu.publish(List.of(pool("pool-a", 2)));

    await().until(() -> slicesOf(GPU).size() == 1);
    ResourceSlice slice = slicesOf(GPU).get(0);
    assertThat(slice.getApiVersion()).isEqualTo("resource.k8s.io/v1");
    assertThat(slice.getMetadata().getName()).startsWith(NODE + "-" + GPU + "-");
    assertThat(slice.getMetadata().getGenerateName()).isEqualTo(NODE + "-" + GPU + "-");
    assertThat(slice.getSpec().getNodeName()).isEqualTo(NODE);
    assertThat(slice.getSpec().getDriver()).isEqualTo(GPU);
    assertThat(slice.getSpec().getPool().getName()).isEqualTo("pool-a");
    assertThat(slice.getSpec().getPool().getGeneration()).isEqualTo(1L);
    assertThat(slice.getSpec().getPool().getResourceSliceCount()).isEqualTo(1L);
    assertThat(slice.getSpec().getDevices()).extracting(Device::getName).containsExactly("dev-000", "dev-001");
    OwnerReference owner = slice.getMetadata().getOwnerReferences().get(0);
    assertThat(slice.getMetadata().getOwnerReferences()).hasSize(1);
    assertThat(owner.getApiVersion()).isEqualTo("v1");
    assertThat(owner.getKind()).isEqualTo("Node");
    assertThat(owner.getName()).isEqualTo(NODE);
    assertThat(owner.getUid()).isEqualTo(nodeUid);
    assertThat(owner.getController()).isTrue();
    assertThat(barrier.writesOf(GPU)).singleElement().satisfies(w -> {
      assertThat(w.verb()).isEqualTo(Verb.CREATE);
      assertThat(w.nodeName()).isEqualTo(NODE);
      assertThat(w.succeeded()).isTrue();
    });
  }

  private NodeResourcesController controllersFirst() {
    return controllers.get(0);
  }

  @Test
  void anUnchangedWorldCausesNoWrites() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    gpu.publish(List.of(pool("pool-a", 3), pool("pool-b", 1)));
    await().until(() -> slicesOf(GPU).size() == 2);
    barrier.pass();
    server.clearWrites();

    // the same content in new objects and another order
    List<Device> shuffled = new ArrayList<>(pool("pool-a", 3).devices());
    Collections.reverse(shuffled);
    gpu.publish(List.of(pool("pool-b", 1), new Pool("pool-a", shuffled)));
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).isEmpty();

    // a restart of the controller and of the driver: still nothing to write
    controller.close();
    NodeResourcesController second = started();
    second.addDriver(new TestDriver(GPU).snapshotOnSubscribe(List.of(pool("pool-a", 3), pool("pool-b", 1))));
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).isEmpty();
    assertThat(slicesOf(GPU)).hasSize(2);
  }

  @Test
  void aChangedPoolUpdatesItsObsoleteSliceWithTheNextGenerationAndLeavesOtherPoolsAlone() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    gpu.publish(List.of(pool("pool-a", 1), pool("pool-b", 1)));
    await().until(() -> slicesOf(GPU).size() == 2);
    ResourceSlice before = slicesOf(GPU).stream().filter(s -> s.getSpec().getPool().getName().equals("pool-a"))
        .findFirst().orElseThrow();
    server.clearWrites();

    gpu.publish(List.of(pool("pool-a", 2), pool("pool-b", 1)));
    await().until(() -> barrier.writesOf(GPU).size() == 1);
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).singleElement().satisfies(w -> {
      assertThat(w.verb()).isEqualTo(Verb.UPDATE);
      assertThat(w.name()).isEqualTo(before.getMetadata().getName());
    });
    List<ResourceSlice> after = slicesOf(GPU);
    assertThat(after).extracting(s -> s.getSpec().getPool().getName() + "/" + s.getSpec().getPool().getGeneration()
        + "/" + s.getSpec().getPool().getResourceSliceCount() + "/" + s.getSpec().getDevices().size())
        .containsExactlyInAnyOrder("pool-a/2/1/2", "pool-b/1/1/1");
  }

  @Test
  void leftoverSlicesAreDeleted() {
    NodeResourcesController controller = started();
    // a slice of this node and driver that the controller wrote before (its label), and one of another node
    admin.resources(ResourceSlice.class).resource(new ResourceSliceBuilder()
        .withNewMetadata().withName(NODE + "-" + GPU + "-stray").addToLabels(NodeSlices.MANAGED_BY, NodeSlices.NODELET)
        .endMetadata()
        .withNewSpec().withDriver(GPU).withNodeName(NODE).withNewPool().withName("gone").withGeneration(7L)
        .withResourceSliceCount(1L).endPool().endSpec().build()).create();
    admin.resources(ResourceSlice.class).resource(new ResourceSliceBuilder()
        .withNewMetadata().withName("node-b-" + GPU + "-other").endMetadata()
        .withNewSpec().withDriver(GPU).withNodeName("node-b").withNewPool().withName("node-b").withGeneration(1L)
        .withResourceSliceCount(1L).endPool().endSpec().build()).create();
    server.clearWrites();
    // the controller must have seen the stray slice, or it creates both pools' slices and deletes the stray later
    await().until(() -> controller.slices().stream().anyMatch(s -> s.name().equals(NODE + "-" + GPU + "-stray")));
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    gpu.publish(List.of(pool("pool-a", 1), pool("pool-b", 1)));
    await().until(() -> barrier.writesOf(GPU).size() == 2);
    barrier.pass();
    assertThat(verbs(barrier.writesOf(GPU))).as("the stray slice is reused for one pool")
        .containsExactlyInAnyOrder(Verb.UPDATE, Verb.CREATE);
    server.clearWrites();

    gpu.publish(List.of(pool("pool-b", 1)));
    await().until(() -> barrier.writesOf(GPU).size() == 1);
    barrier.pass();
    assertThat(verbs(barrier.writesOf(GPU))).containsExactly(Verb.DELETE);
    assertThat(slicesOf(GPU)).extracting(s -> s.getSpec().getNodeName() + "/" + s.getSpec().getPool().getName())
        .containsExactlyInAnyOrder(NODE + "/pool-b", "node-b/node-b");
    assertThat(server.writes()).noneMatch(w -> "node-b".equals(w.nodeName()));
  }

  @Test
  void poolsAbove128DevicesAreSplitAndShrinkBack() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    gpu.publish(List.of(pool("big", 300)));
    await().until(() -> slicesOf(GPU).size() == 3);
    List<ResourceSlice> slices = slicesOf(GPU);
    assertThat(slices).extracting(s -> s.getSpec().getDevices().size()).containsExactly(128, 128, 44);
    assertThat(slices).allSatisfy(s -> {
      assertThat(s.getSpec().getPool().getGeneration()).isEqualTo(1L);
      assertThat(s.getSpec().getPool().getResourceSliceCount()).isEqualTo(3L);
    });
    assertThat(slices.stream().flatMap(s -> s.getSpec().getDevices().stream()).map(Device::getName).distinct())
        .hasSize(300);
    server.clearWrites();

    gpu.publish(List.of(pool("big", 100)));
    await().until(() -> slicesOf(GPU).size() == 1);
    barrier.pass();
    assertThat(verbs(barrier.writesOf(GPU))).containsExactlyInAnyOrder(Verb.UPDATE, Verb.DELETE, Verb.DELETE);
    ResourceSlice left = slicesOf(GPU).get(0);
    assertThat(left.getSpec().getPool().getGeneration()).isEqualTo(2L);
    assertThat(left.getSpec().getPool().getResourceSliceCount()).isEqualTo(1L);
    assertThat(left.getSpec().getDevices()).hasSize(100);
  }

  @Test
  void aPoolWithoutDevicesIsOneEmptySliceAndNoPoolIsNoSlice() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    gpu.publish(List.of(pool("pool-a", 0)));
    await().until(() -> slicesOf(GPU).size() == 1);
    ResourceSlice empty = slicesOf(GPU).get(0);
    assertThat(empty.getSpec().getDevices()).isEmpty();
    assertThat(empty.getSpec().getPool().getName()).isEqualTo("pool-a");
    assertThat(empty.getSpec().getPool().getResourceSliceCount()).isEqualTo(1L);
    barrier.pass();
    server.clearWrites();

    // the same empty pool again: nothing to write
    gpu.publish(List.of(pool("pool-a", 0)));
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).isEmpty();

    gpu.publish(List.of());
    await().until(() -> slicesOf(GPU).isEmpty());
    assertThat(verbs(barrier.writesOf(GPU))).containsExactly(Verb.DELETE);
  }

  @Test
  void sharedCountersGetSlicesOfTheirOwnAndPartitionsWithBindingConditionsPassThrough() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    List<CounterSet> sets = IntStream.range(0, 9).mapToObj(i -> counterSet("gpu-" + i, "80Gi")).toList();
    List<Device> partitions = IntStream.range(0, 65).mapToObj(i -> new DeviceBuilder(
        partition(String.format("part-%03d", i),
            "gpu-" + i % 9)).withBindsToNode(true).withBindingConditions("example.com/attached")
        .withBindingFailureConditions("example.com/failed").build()).toList();
    Pool pool = new Pool("p", partitions, sets);
    gpu.publish(List.of(pool));
    await().until(() -> slicesOf(GPU).size() == 4);

    List<ResourceSlice> slices = slicesOf(GPU);
    assertThat(slices).allSatisfy(s -> assertThat(s.getSpec().getPool().getResourceSliceCount()).isEqualTo(4L));
    assertThat(slices).as("devices consuming counters: at most 64 per slice, no counters beside them")
        .filteredOn(s -> !s.getSpec().getDevices().isEmpty())
        .allSatisfy(s -> assertThat(s.getSpec().getSharedCounters()).isEmpty())
        .extracting(s -> s.getSpec().getDevices().size()).containsExactlyInAnyOrder(64, 1);
    assertThat(slices).as("counter sets: at most 8 per slice")
        .filteredOn(s -> s.getSpec().getDevices().isEmpty())
        .extracting(s -> s.getSpec().getSharedCounters().size()).containsExactlyInAnyOrder(8, 1);
    Device stored = slices.stream().flatMap(s -> s.getSpec().getDevices().stream())
        .filter(d -> d.getName().equals("part-010")).findFirst().orElseThrow();
    assertThat(stored.getConsumesCounters()).singleElement()
        .satisfies(c -> assertThat(c.getCounterSet()).isEqualTo("gpu-1"));
    assertThat(stored.getBindsToNode()).isTrue();
    assertThat(stored.getBindingConditions()).containsExactly("example.com/attached");
    assertThat(stored.getBindingFailureConditions()).containsExactly("example.com/failed");
    barrier.pass();
    server.clearWrites();

    // the same pool in new objects: nothing to write
    gpu.publish(List.of(new Pool("p", new ArrayList<>(partitions), new ArrayList<>(sets))));
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).isEmpty();

    // a changed counter is a change of the whole pool
    List<CounterSet> changed = new ArrayList<>(sets);
    changed.set(0, counterSet("gpu-0", "40Gi"));
    gpu.publish(List.of(new Pool("p", partitions, changed)));
    await().until(() -> slicesOf(GPU).stream().allMatch(s -> s.getSpec().getPool().getGeneration() == 2L));
  }

  @Test
  void fieldsTheServerDropsForAFeatureGateThatIsOffAreReportedOnceNotWrittenForever() {
    stop();
    serve(EmbeddedApiServer.builder().disableFeatureGates("DRAPartitionableDevices"));
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    CounterSet set = counterSet("gpu-0", "80Gi");
    Device partition = partition("part-0", "gpu-0");
    gpu.publish(List.of(new Pool("p", List.of(partition), List.of(set))));
    await().until(() -> status(controller).lastError().isPresent());
    assertThat(status(controller).lastError().orElseThrow())
        .startsWith("driver \"gpu.example.com\": the API server dropped spec.devices[].consumesCounters from "
            + "ResourceSlice " + NODE + "-" + GPU + "-")
        .contains("enable the feature gate DRAPartitionableDevices on the kube-apiserver");
    barrier.pass();
    server.clearWrites();

    // neither the resync nor the same snapshot again writes
    time.advance(ControllerOptions.DEFAULTS.resyncPeriod());
    gpu.publish(List.of(new Pool("p", List.of(partition), List.of(set))));
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).isEmpty();
    assertThat(status(controller).lastError()).isPresent();

    // a snapshot without the gated fields is published
    gpu.publish(List.of(pool("p", 1)));
    await().until(() -> status(controller).lastError().isEmpty());
    await().until(() -> slicesOf(GPU).size() == 1);
  }

  private static DriverStatus status(NodeResourcesController controller) {
    return controller.driverStatuses().stream().filter(s -> s.driverName().equals(GPU)).findFirst().orElseThrow();
  }

  @Test
  void aPoolWithTaintedDevicesIsSplitAt64() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    List<Device> devices = new ArrayList<>(pool("p", 65).devices());
    devices.set(0, new DeviceBuilder(devices.get(0)).addNewTaint().withKey("broken").withEffect("NoSchedule")
        .endTaint().build());
    gpu.publish(List.of(new Pool("p", devices)));
    await().until(() -> slicesOf(GPU).size() == 2);
    assertThat(slicesOf(GPU)).extracting(s -> s.getSpec().getDevices().size()).containsExactly(64, 1);
  }

  @Test
  void taintsKeepTheTimeAddedTheServerGaveThemAndCauseNoWriteLoop() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    List<Device> devices = new ArrayList<>(pool("p", 2).devices());
    devices.set(0, new DeviceBuilder(devices.get(0)).addNewTaint().withKey("broken").withEffect("NoSchedule")
        .endTaint().build());
    gpu.publish(List.of(new Pool("p", devices)));
    await().until(() -> slicesOf(GPU).size() == 1);
    // the server gave the taint the time of the write, to the second, as a kube-apiserver does
    String timeAdded = slicesOf(GPU).get(0).getSpec().getDevices().get(0).getTaints().get(0).getTimeAdded();
    assertThat(timeAdded).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ");
    barrier.pass();
    server.clearWrites();

    // the same taint again, still without a time: nothing to write, the stored time stays
    gpu.publish(List.of(new Pool("p", new ArrayList<>(devices))));
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).isEmpty();
    assertThat(slicesOf(GPU).get(0).getSpec().getDevices().get(0).getTaints().get(0).getTimeAdded())
        .isEqualTo(timeAdded);

    // a restart of the controller and the driver with nothing changed: no write either
    controller.close();
    NodeResourcesController second = started();
    TestDriver again = new TestDriver(GPU).snapshotOnSubscribe(List.of(new Pool("p", new ArrayList<>(devices))));
    second.addDriver(again);
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).isEmpty();

    // a changed taint is a change
    devices.set(0, new DeviceBuilder(devices.get(0)).editFirstTaint().withEffect("NoExecute").endTaint().build());
    again.publish(List.of(new Pool("p", devices)));
    await().until(() -> !barrier.writesOf(GPU).isEmpty());
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).hasSize(1);
  }

  @Test
  void aSubSecondTaintTimeIsWrittenToTheSecondAndCausesNoWriteLoop() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    List<Device> devices = new ArrayList<>(pool("p", 1).devices());
    devices.set(0, new DeviceBuilder(devices.get(0)).addNewTaint().withKey("broken").withEffect("NoSchedule")
        .withTimeAdded("2026-11-28T11:00:00.123456+01:00").endTaint().build());
    gpu.publish(List.of(new Pool("p", devices)));
    await().until(() -> slicesOf(GPU).size() == 1);
    // stored as a kube-apiserver stores metav1.Time: UTC, whole seconds
    assertThat(slicesOf(GPU).get(0).getSpec().getDevices().get(0).getTaints().get(0).getTimeAdded())
        .isEqualTo("2026-11-28T10:00:00Z");
    barrier.pass();
    server.clearWrites();

    // the driver reports the same sub-second time again: nothing differs, nothing is written
    gpu.publish(List.of(new Pool("p", new ArrayList<>(devices))));
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).isEmpty();
  }

  @Test
  void nothingIsWrittenBeforeTheReflectorHasSynced() {
    server.failNext(Verb.WATCH, "resourceslices", 3, 500); // the initial WatchList request
    NodeResourcesController controller = controller(() -> Optional.of(nodeUid), ControllerOptions.DEFAULTS);
    TestDriver gpu = new TestDriver(GPU).snapshotOnSubscribe(List.of(pool("pool-a", 1)));
    controller.addDriver(gpu);
    controller.start();

    // three failed syncs, then the fourth after the reflector's backoff: the driver's data waits
    await().until(() -> server.requestCount(Verb.WATCH, "resourceslices") >= 3);
    assertThat(server.writes()).isEmpty();
    await().atMost(Duration.ofSeconds(30)).until(() -> slicesOf(GPU).size() == 1);
    assertThat(server.requestCount(Verb.WATCH, "resourceslices")).isGreaterThanOrEqualTo(4);
  }

  @Test
  void failedWritesAreRetriedWithRateLimitingAndSuccessResetsTheDelay() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    gpu.publish(List.of(pool("pool-a", 1)));
    await().until(() -> slicesOf(GPU).size() == 1);
    barrier.pass();
    server.clearWrites();

    server.failNext(Verb.UPDATE, "resourceslices", 2, 500);
    gpu.publish(List.of(pool("pool-a", 2)));
    await().until(() -> time.pendingDelays().contains(Duration.ofMillis(5)));
    assertThat(server.writes()).singleElement().satisfies(w -> assertThat(w.status()).isEqualTo(500));
    time.advance(Duration.ofMillis(5));
    await().until(() -> time.pendingDelays().contains(Duration.ofMillis(10)));
    assertThat(server.writes()).hasSize(2);
    time.advance(Duration.ofMillis(10));
    await().until(() -> slicesOf(GPU).get(0).getSpec().getDevices().size() == 2);
    assertThat(verbs(barrier.writesOf(GPU))).containsExactly(Verb.UPDATE, Verb.UPDATE, Verb.UPDATE);

    // forgotten after the success: the next failure starts at the base delay again
    server.failNext(Verb.UPDATE, "resourceslices", 1, 409);
    gpu.publish(List.of(pool("pool-a", 3)));
    await().until(() -> time.pendingDelays().contains(Duration.ofMillis(5)));
    time.advance(Duration.ofMillis(5));
    await().until(() -> slicesOf(GPU).get(0).getSpec().getDevices().size() == 3);
  }

  @Test
  void anExceptionInsideTheSyncIsRetriedWithRateLimiting() {
    // the supplier fails until the retry is due, whichever sync (the start's or the driver's) calls it first
    AtomicBoolean fixed = new AtomicBoolean();
    NodeResourcesController controller = controller(() -> {
      if (!fixed.get()) {
        throw new IllegalStateException("a bug in the UID supplier");
      }
      return Optional.of(nodeUid);
    }, ControllerOptions.DEFAULTS);
    controller.start();
    TestDriver gpu = new TestDriver(GPU).snapshotOnSubscribe(List.of(pool("pool-a", 1)));
    controller.addDriver(gpu);

    await().until(() -> time.pendingDelays().contains(Duration.ofMillis(5)));
    assertThat(server.writes()).isEmpty();
    fixed.set(true);
    time.advance(Duration.ofMillis(5));
    await().until(() -> slicesOf(GPU).size() == 1);
  }

  @Test
  void invalidDriverDataIsRejectedWhilePublishedSlicesStay() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    gpu.publish(List.of(pool("pool-a", 2)));
    await().until(() -> slicesOf(GPU).size() == 1);
    List<ResourceSlice> published = slicesOf(GPU);
    barrier.pass();
    server.clearWrites();

    gpu.publish(List.of(new Pool("pool-a", List.of(device("dev-000"), device("Bad_Name"), device("dev-000")))));
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).isEmpty();
    assertThat(slicesOf(GPU)).isEqualTo(published);
    assertThat(controller.driverError(GPU)).hasValueSatisfying(error -> assertThat(error)
        .startsWith("driver \"gpu.example.com\" reported invalid resources")
        .contains("device \"Bad_Name\": the name must be a DNS label")
        .contains("device \"dev-000\": duplicate device name in the pool"));

    gpu.publish(List.of(pool("pool-a", 3)));
    await().until(() -> slicesOf(GPU).get(0).getSpec().getDevices().size() == 3);
    assertThat(controller.driverError(GPU)).isEmpty();
  }

  @Test
  void aDriverThatGoesAwayLosesItsSlicesAfterTheGracePeriodOnly() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    gpu.publish(List.of(pool("pool-a", 1)));
    await().until(() -> slicesOf(GPU).size() == 1);
    time.advance(GRACE); // past the start-up grace period
    barrier.pass();
    server.clearWrites();

    controller.removeDriver(gpu);
    assertThat(gpu.closes).hasValue(1);
    barrier.pass();
    time.advance(GRACE.minusSeconds(1));
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).isEmpty();

    time.advance(Duration.ofSeconds(1));
    await().until(() -> slicesOf(GPU).isEmpty());
    assertThat(verbs(barrier.writesOf(GPU))).containsExactly(Verb.DELETE);
  }

  @Test
  void aDriverThatReturnsWithinTheGracePeriodCausesNoChurn() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU).snapshotOnSubscribe(List.of(pool("pool-a", 1)));
    controller.addDriver(gpu);
    await().until(() -> slicesOf(GPU).size() == 1);
    time.advance(GRACE);
    barrier.pass();
    server.clearWrites();

    controller.removeDriver(gpu);
    time.advance(GRACE.minusSeconds(10));
    controller.addDriver(new TestDriver(GPU).snapshotOnSubscribe(List.of(pool("pool-a", 1))));
    time.advance(GRACE.multipliedBy(2));
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).isEmpty();
    assertThat(slicesOf(GPU)).hasSize(1);
  }

  @Test
  void atStartUpSlicesOfDriversThatDoNotReturnWithinTheGracePeriodAreDeleted() {
    NodeResourcesController first = started();
    first.addDriver(new TestDriver(GPU).snapshotOnSubscribe(List.of(pool("pool-a", 1))));
    first.addDriver(new TestDriver("old.example.com").snapshotOnSubscribe(List.of(pool("pool-o", 1))));
    await().until(() -> slicesOf(GPU).size() == 1 && slicesOf("old.example.com").size() == 1);
    first.close();
    server.clearWrites();

    NodeResourcesController second = started();
    second.addDriver(new TestDriver(GPU).snapshotOnSubscribe(List.of(pool("pool-a", 1))));
    time.advance(GRACE.minusSeconds(1));
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).isEmpty();
    assertThat(barrier.writesOf("old.example.com")).isEmpty();

    time.advance(Duration.ofSeconds(1));
    await().until(() -> slicesOf("old.example.com").isEmpty());
    barrier.pass();
    assertThat(verbs(barrier.writesOf("old.example.com"))).containsExactly(Verb.DELETE);
    assertThat(barrier.writesOf(GPU)).isEmpty();
  }

  @Test
  void theSlicesOfADriverThatPublishesItsOwnAreLeftAloneUntilItIsGoneForTheGracePeriod() {
    NodeResourcesController first = started();
    first.addDriver(new TestDriver(GPU).snapshotOnSubscribe(List.of(pool("pool-a", 1))));
    await().until(() -> slicesOf(GPU).size() == 1); // stands for the slice the kubelet plugin wrote
    first.close();
    server.clearWrites();

    NodeResourcesController second = started();
    TestDriver plugin = new TestDriver(GPU);
    second.addSelfPublished(plugin);
    assertThat(plugin.subscriptions).as("never subscribed").hasValue(0);
    time.advance(GRACE.multipliedBy(3));
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).isEmpty();
    assertThat(second.driverStatuses()).anySatisfy(
        d -> assertThat(d.state()).isEqualTo(DriverStatus.State.SELF_PUBLISHING));

    second.removeSelfPublished(plugin);
    time.advance(GRACE.minusSeconds(1));
    barrier.pass();
    assertThat(slicesOf(GPU)).hasSize(1);
    time.advance(Duration.ofSeconds(1));
    await().until(() -> slicesOf(GPU).isEmpty());
  }

  @Test
  void aNewRegistrationOfTheSameNameReplacesTheMonitor() {
    NodeResourcesController controller = started();
    TestDriver old = new TestDriver(GPU).snapshotOnSubscribe(List.of(pool("pool-a", 1)));
    controller.addDriver(old);
    await().until(() -> slicesOf(GPU).size() == 1);

    // a bundle update: the new service comes before the old one goes
    TestDriver updated = new TestDriver(GPU).snapshotOnSubscribe(List.of(pool("pool-a", 2)));
    controller.addDriver(updated);
    assertThat(old.closes).hasValue(1);
    await().until(() -> slicesOf(GPU).get(0).getSpec().getDevices().size() == 2);
    controller.removeDriver(old);
    time.advance(GRACE.multipliedBy(2));
    barrier.pass();
    assertThat(slicesOf(GPU)).hasSize(1);

    // late events of the replaced registration are ignored
    old.publish(List.of(pool("pool-a", 5)));
    barrier.pass();
    assertThat(slicesOf(GPU).get(0).getSpec().getDevices()).hasSize(2);
  }

  @Test
  void retryableStreamErrorsResubscribeWithBackoffOthersStopMonitoring() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    assertThat(gpu.subscriptions).hasValue(1);

    gpu.fail(new RuntimeException("stream broken"), true);
    time.advance(Duration.ZERO); // the kubelet retries the first failure at once
    assertThat(gpu.subscriptions).hasValue(2);
    gpu.fail(new RuntimeException("stream broken"), true);
    time.advance(Duration.ofMillis(4_999));
    assertThat(gpu.subscriptions).hasValue(2);
    time.advance(Duration.ofMillis(1));
    assertThat(gpu.subscriptions).hasValue(3);
    gpu.fail(new RuntimeException("stream broken"), true);
    time.advance(Duration.ofSeconds(10));
    assertThat(gpu.subscriptions).hasValue(4);

    gpu.publish(List.of(pool("pool-a", 1)));
    await().until(() -> slicesOf(GPU).size() == 1);
    gpu.fail(new UnsupportedOperationException("Unimplemented"), false);
    time.advance(Duration.ofMinutes(10));
    assertThat(gpu.subscriptions).hasValue(4);
    barrier.pass();
    assertThat(slicesOf(GPU)).as("the last snapshot stays").hasSize(1);
  }

  @Test
  void aStreamBrokenAfterALongHealthyPeriodIsRetriedAtOnce() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    for (int i = 0; i < 8; i++) { // up to the maximum backoff
      gpu.fail(new RuntimeException("stream broken"), true);
      time.advance(Duration.ofMinutes(5));
    }
    int before = gpu.subscriptions.get();
    time.advance(Duration.ofHours(1)); // healthy for longer than twice the maximum backoff
    gpu.fail(new RuntimeException("stream broken after an hour"), true);
    time.advance(Duration.ZERO);
    assertThat(gpu.subscriptions).as("retried at once, not after the old maximum delay").hasValue(before + 1);
  }

  @Test
  void aStreamThatEndsWithoutASnapshotMeansNoResources() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU).snapshotOnSubscribe(List.of(pool("pool-a", 1)));
    controller.addDriver(gpu);
    await().until(() -> slicesOf(GPU).size() == 1);
    controller.removeDriver(gpu);

    TestDriver silent = new TestDriver(GPU);
    controller.addDriver(silent);
    barrier.pass();
    assertThat(slicesOf(GPU)).as("no snapshot yet: the published slices stay").hasSize(1);
    silent.complete();
    await().until(() -> slicesOf(GPU).isEmpty());
  }

  @Test
  void aStreamRefusedForGoodBeforeASnapshotMeansNoResources() {
    NodeResourcesController controller = started();
    TestDriver gpu = new TestDriver(GPU).snapshotOnSubscribe(List.of(pool("pool-a", 1)));
    controller.addDriver(gpu);
    await().until(() -> slicesOf(GPU).size() == 1);
    controller.removeDriver(gpu);

    TestDriver unimplemented = new TestDriver(GPU);
    controller.addDriver(unimplemented);
    barrier.pass();
    unimplemented.fail(new UnsupportedOperationException("Unimplemented"), false);
    await().until(() -> slicesOf(GPU).isEmpty());
  }

  @Test
  void closeLeavesNoThreadWatchOrTimerAndKeepsTheSlices() {
    NodeResourcesController controller = NodeResourcesController.builder(client, NODE)
        .nodeUid(() -> Optional.of(nodeUid)).build();
    controllers.add(controller);
    TestDriver gpu = new TestDriver(GPU).snapshotOnSubscribe(List.of(pool("pool-a", 1)));
    controller.addDriver(gpu);
    controller.start();
    await().until(() -> slicesOf(GPU).size() == 1);
    assertThat(liveThreads()).contains("nodelet-dra-worker", "nodelet-dra-timer");

    controller.close();
    assertThat(gpu.closes).hasValue(1);
    assertThat(liveThreads()).doesNotContain("nodelet-dra-worker", "nodelet-dra-timer");
    await().until(() -> server.openWatches("resourceslices") == 0);
    assertThat(slicesOf(GPU)).hasSize(1);
  }

  private static List<String> liveThreads() {
    return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName).toList();
  }
}
