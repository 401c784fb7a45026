package dev.nodelet.dra.internal;

import dev.nodelet.dra.runtime.ManualScheduler;
import dev.nodelet.dra.internal.NodeResourcesController;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.SnapshotListener;
import dev.nodelet.dra.Subscription;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Drivers sending data the {@code resource.k8s.io/v1} API would refuse: each kind is rejected with an error that
 * names driver, pool and device, visible in the driver's {@link DriverStatus#lastError()}, and the slices published
 * before stay exactly as they were (no write at all).
 */
class InvalidDriverDataTest {

  private static final String NODE = "node-a";
  private static final String GPU = "gpu.example.com";

  private EmbeddedApiServer server;
  private KubernetesClient client;
  private NodeResourcesController controller;
  private final ManualScheduler time = new ManualScheduler();
  private final WorkerBarrier barrier = new WorkerBarrier(() -> server, NODE);

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
    client = server.newClient();
    String nodeUid = client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata()
        .build()).create().getMetadata().getUid();
    controller = NodeResourcesController.builder(client, NODE).nodeUid(() -> Optional.of(nodeUid))
        .scheduler(time).random(() -> 0.0).build();
    controller.start();
    barrier.addTo(controller);
  }

  @AfterEach
  void stop() {
    controller.close();
    client.close();
    server.close();
  }

  private List<ResourceSlice> slicesOf(String driver) {
    return client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(s -> driver.equals(s.getSpec().getDriver()))
        .sorted(Comparator.comparing(s -> s.getSpec().getPool().getName()))
        .toList();
  }

  private Optional<DriverStatus> status(String driver) {
    return controller.driverStatuses().stream().filter(s -> s.driverName().equals(driver)).findFirst();
  }

  private static Device device(String name) {
    return new DeviceBuilder().withName(name)
        .addToAttributes("model", new DeviceAttribute(null, null, "a100", null))
        .build();
  }

  private static Pool pool(String name, int devices) {
    return new Pool(name, IntStream.range(0, devices).mapToObj(i -> device(String.format("dev-%03d", i))).toList());
  }

  /** Each snapshot with what is wrong with it, as the error tells it. */
  private static Map<String, List<Pool>> invalidSnapshots() {
    Map<String, List<Pool>> invalid = new LinkedHashMap<>();
    String poolRule = ": the name must be DNS subdomains separated by \"/\", at most 253 characters";
    invalid.put("pool \"Bad_Pool\"" + poolRule, List.of(new Pool("Bad_Pool", List.of(device("d")))));
    invalid.put("pool \"a//b\"" + poolRule, List.of(new Pool("a//b", List.of(device("d")))));
    invalid.put("pool \"\"" + poolRule, List.of(new Pool("", List.of(device("d")))));
    String longPool = "p".repeat(200) + "/" + "q".repeat(60);
    invalid.put("pool \"" + longPool + "\"" + poolRule, List.of(new Pool(longPool, List.of(device("d")))));
    invalid.put("pool \"pool-a\": more than one pool has this name", List.of(pool("pool-a", 1), pool("pool-a", 1)));
    String labelRule = ": the name must be a DNS label (lower case letters, digits and '-', at most 63 characters)";
    invalid.put("pool \"pool-a\": device \"dev_0\"" + labelRule, List.of(new Pool("pool-a", List.of(device("dev_0")))));
    invalid.put("pool \"pool-a\": device \"" + "d".repeat(64) + "\"" + labelRule,
        List.of(new Pool("pool-a", List.of(device("d".repeat(64))))));
    invalid.put("pool \"pool-a\": device \"null\"" + labelRule,
        List.of(new Pool("pool-a", List.of(new DeviceBuilder().build()))));
    invalid.put("pool \"pool-a\": device \"dev-000\": duplicate device name in the pool",
        List.of(new Pool("pool-a", List.of(device("dev-000"), device("dev-000")))));
    DeviceBuilder crowded = new DeviceBuilder().withName("crowded");
    for (int i = 0; i < 30; i++) {
      crowded.addToAttributes("attr" + i, new DeviceAttribute(true, null, null, null));
    }
    for (int i = 0; i < 3; i++) {
      crowded.addToCapacity("cap" + i, new DeviceCapacity(null, new Quantity("1")));
    }
    invalid.put("pool \"pool-a\": device \"crowded\": 33 attributes and capacities, at most 32 are allowed",
        List.of(new Pool("pool-a", List.of(crowded.build()))));
    invalid.put("attribute name \"bad name\" must be an identifier",
        List.of(new Pool("pool-a", List.of(new DeviceBuilder().withName("d")
            .addToAttributes("bad name", new DeviceAttribute(null, 1L, null, null)).build()))));
    invalid.put("attribute \"model\": the string is longer than 64 characters",
        List.of(new Pool("pool-a", List.of(new DeviceBuilder().withName("d")
            .addToAttributes("model", new DeviceAttribute(null, null, "m".repeat(65), null)).build()))));
    invalid.put("attribute \"driverVersion\": the version must be a semantic version",
        List.of(new Pool("pool-a", List.of(new DeviceBuilder().withName("d")
            .addToAttributes("driverVersion", new DeviceAttribute(null, null, null, "v1")).build()))));
    invalid.put("attribute \"both\": exactly one of bool, int, string and version must be set, 2 are",
        List.of(new Pool("pool-a", List.of(new DeviceBuilder().withName("d")
            .addToAttributes("both", new DeviceAttribute(true, 1L, null, null)).build()))));
    invalid.put("capacity \"memory\" has no value",
        List.of(new Pool("pool-a", List.of(new DeviceBuilder().withName("d")
            .addToCapacity("memory", new DeviceCapacity()).build()))));
    invalid.put("nodeName, nodeSelector and allNodes must not be set",
        List.of(new Pool("pool-a", List.of(new DeviceBuilder().withName("d").withNodeName("other").build()))));
    invalid.put("the snapshot is null", null);
    return invalid;
  }

  @Test
  void everyKindOfInvalidDataIsRejectedInTheStatusWhilePublishedSlicesStay() {
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    gpu.publish(List.of(pool("pool-a", 2), pool("pool-b", 1)));
    await().until(() -> slicesOf(GPU).size() == 2);
    List<ResourceSlice> published = slicesOf(GPU);
    barrier.pass();
    server.clearWrites();

    List<String> errors = new ArrayList<>();
    invalidSnapshots().forEach((expected, pools) -> {
      gpu.publish(pools);
      DriverStatus status = status(GPU).orElseThrow();
      assertThat(status.state()).isEqualTo(DriverStatus.State.MONITORING);
      assertThat(status.lastError()).hasValueSatisfying(error -> assertThat(error)
          .startsWith("driver \"gpu.example.com\" reported invalid resources: ").contains(expected));
      errors.add(status.lastError().orElseThrow());
    });
    barrier.pass();
    assertThat(barrier.writesOf(GPU)).as("no write for any invalid snapshot").isEmpty();
    assertThat(slicesOf(GPU)).isEqualTo(published);
    assertThat(errors).doesNotHaveDuplicates();

    // the next valid snapshot is published and clears the error
    gpu.publish(List.of(pool("pool-a", 3), pool("pool-b", 1)));
    await().until(() -> slicesOf(GPU).get(0).getSpec().getDevices().size() == 3);
    assertThat(status(GPU).orElseThrow().lastError()).isEmpty();
    assertThat(slicesOf(GPU).get(1)).isEqualTo(published.get(1));
  }

  @Test
  void aDriverWithAnInvalidNameIsRefusedAndShownInTheStatusUntilItGoesAway() {
    TestDriver bad = new TestDriver("Bad_Driver.example.com");
    TestDriver tooLong = new TestDriver("d".repeat(64));
    DeviceSnapshots nameless = new DeviceSnapshots() {
      @Override
      public String driverName() {
        throw new IllegalStateException("not configured");
      }

      @Override
      public Subscription subscribe(SnapshotListener listener) {
        throw new AssertionError("never subscribed");
      }
    };
    TestDriver gpu = new TestDriver(GPU);
    gpu.snapshotOnSubscribe(List.of(pool("pool-a", 1)));
    controller.addDriver(bad);
    controller.addDriver(tooLong);
    controller.addDriver(nameless);
    controller.addDriver(gpu);
    await().until(() -> slicesOf(GPU).size() == 1);

    assertThat(bad.subscriptions).hasValue(0);
    assertThat(tooLong.subscriptions).hasValue(0);
    assertThat(status("Bad_Driver.example.com")).hasValueSatisfying(s -> {
      assertThat(s.state()).isEqualTo(DriverStatus.State.STOPPED);
      assertThat(s.lastError()).contains("driver name \"Bad_Driver.example.com\" is not a DNS subdomain of at "
          + "most 63 characters");
    });
    assertThat(status("d".repeat(64))).hasValueSatisfying(s -> assertThat(s.lastError().orElseThrow())
        .contains("is not a DNS subdomain of at most 63 characters"));
    assertThat(status("<no name>")).hasValueSatisfying(s -> assertThat(s.lastError().orElseThrow())
        .isEqualTo("the driver service failed to tell its name: java.lang.IllegalStateException: not configured"));
    assertThat(status(GPU)).hasValueSatisfying(s -> assertThat(s.lastError()).isEmpty());

    controller.removeDriver(bad);
    controller.removeDriver(tooLong);
    controller.removeDriver(nameless);
    assertThat(controller.driverStatuses()).extracting(DriverStatus::driverName).containsExactly(WorkerBarrier.DRIVER,
        GPU);
    barrier.pass();
    assertThat(slicesOf(GPU)).hasSize(1);
    assertThat(server.writes()).noneMatch(w -> w.name() != null && w.name().contains("Bad_Driver"));
  }
}
