package dev.nodelet.driver.example.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.configuration.RecordingPublisher;
import dev.nodelet.dra.ClaimPreparation;
import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.SnapshotListener;
import dev.nodelet.dra.runtime.NodeResources;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.RecordedWrite;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.osgi.util.converter.Converters;

class ExampleDriverTest {

  private static ExampleDriverConfiguration config(Map<String, Object> values) {
    Map<String, Object> all = new HashMap<>(Map.of("driver.name", "gpu.example.com", "pool", "node-a",
        "device.count", 3));
    all.putAll(values);
    return Converters.standardConverter().convert(all).to(ExampleDriverConfiguration.class);
  }

  @Test
  void devicesFromTheConfigurationArePublishedAndAChangeIsOneUpdate() {
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = server.newClient()) {
      String uid = client.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-a").endMetadata()
          .build()).create().getMetadata().getUid();
      ExampleDriver driver = new ExampleDriver(new RecordingPublisher(), config(Map.of(
          "attributes", new String[] {"model=a100", "cores=108", "ecc=true", "driverVersion=1.2.3"},
          "capacity", new String[] {"memory=80Gi"})), Map.of());
      try (NodeResources controller = NodeResources.builder(client, "node-a")
          .nodeUid(() -> Optional.of(uid)).build()) {
        controller.start();
        controller.addDriver(driver);

        await().until(() -> client.resources(ResourceSlice.class).list().getItems().size() == 1);
        ResourceSlice slice = client.resources(ResourceSlice.class).list().getItems().get(0);
        assertThat(slice.getSpec().getDriver()).isEqualTo("gpu.example.com");
        assertThat(slice.getSpec().getPool().getName()).isEqualTo("node-a");
        assertThat(slice.getSpec().getDevices()).extracting(Device::getName)
            .containsExactly("dev-0", "dev-1", "dev-2");
        Device device = slice.getSpec().getDevices().get(0);
        assertThat(device.getAttributes()).containsExactlyInAnyOrderEntriesOf(Map.of(
            "model", new DeviceAttribute(null, null, "a100", null),
            "cores", new DeviceAttribute(null, 108L, null, null),
            "ecc", new DeviceAttribute(true, null, null, null),
            "driverVersion", new DeviceAttribute(null, null, null, "1.2.3")));
        assertThat(device.getCapacity().get("memory").getValue()).isEqualTo(new Quantity("80Gi"));
        await().until(() -> server.writes().stream().filter(w -> w.resource().equals("resourceslices")).count() == 1);
        server.clearWrites();

        driver.modified(config(Map.of("device.count", 5)), Map.of());
        await().until(() -> client.resources(ResourceSlice.class).list().getItems().get(0).getSpec().getDevices()
            .size() == 5);
        assertThat(server.writes()).extracting(RecordedWrite::verb).containsExactly(Verb.UPDATE);
        assertThat(controller.driverError("gpu.example.com")).isEmpty();
      }
    }
  }

  @Test
  void aSubscriptionGetsTheCurrentSnapshotAndNoMoreAfterClose() {
    ExampleDriver driver = new ExampleDriver(new RecordingPublisher(), config(Map.of()), Map.of());
    Recording recording = new Recording();
    var subscription = driver.subscribe(recording);
    List<List<Pool>> received = recording.snapshots;
    assertThat(received).singleElement().satisfies(p -> assertThat(p.get(0).devices()).hasSize(3));
    subscription.close();
    driver.modified(config(Map.of("device.count", 1)), Map.of());
    assertThat(received).hasSize(1);
  }

  @Test
  void itsMetricsFollowTheConfiguration() {
    ExampleDriver driver = new ExampleDriver(new RecordingPublisher(), config(Map.of("driver.name", "gpu.example.com",
        "device.count", 3)), Map.of());
    assertThat(gauge(driver, "nodelet_example_driver_devices")).isEqualTo(3);
    assertThat(gauge(driver, "nodelet_example_driver_prepared_claims")).isZero();
    driver.modified(config(Map.of("driver.name", "gpu.example.com", "device.count", 5)), Map.of());
    assertThat(gauge(driver, "nodelet_example_driver_devices")).isEqualTo(5);
  }

  private static double gauge(ExampleDriver driver, String name) {
    GaugeSnapshot snapshot = (GaugeSnapshot) driver.collect().stream()
        .filter(s -> s.getMetadata().getName().equals(name)).findFirst().orElseThrow();
    assertThat(snapshot.getDataPoints()).singleElement()
        .satisfies(p -> assertThat(p.getLabels().get("driver")).isEqualTo("gpu.example.com"));
    return snapshot.getDataPoints().get(0).getValue();
  }

  @Test
  void badFirstValuesWaitNamingTheKey() {
    assertThat(RecordingPublisher.waits(r -> new ExampleDriver(r, config(Map.of("device.count", -1)), Map.of()),
        ExampleDriver::deactivate))
        .contains("device.count: must be between 0 and 10000, was -1");
    assertThat(RecordingPublisher.waits(r -> new ExampleDriver(r, config(Map.of("device.count", "four")), Map.of()),
        ExampleDriver::deactivate))
        .contains("device.count: not a whole number");
    assertThat(RecordingPublisher.waits(r -> new ExampleDriver(r, config(Map.of("attributes",
        new String[] {"model"})), Map.of()), ExampleDriver::deactivate))
        .contains("attributes: entry \"model\" is not name=value");
    assertThat(RecordingPublisher.waits(r -> new ExampleDriver(r, config(Map.of("capacity",
        new String[] {"memory=lots"})), Map.of()), ExampleDriver::deactivate))
        .contains("capacity: entry \"memory=lots\" is not a quantity such as 80Gi");
    assertThat(RecordingPublisher.waits(r -> new ExampleDriver(r, config(Map.of("pool", " ")), Map.of()),
        ExampleDriver::deactivate))
        .contains("pool: must not be empty");
  }

  @Test
  void aBadFirstConfigurationRegistersNoDriverUntilAValidOne() {
    RecordingPublisher registry = new RecordingPublisher();
    Map<String, Object> properties = Map.of("service.pid", "dev.nodelet.driver.example~gpu");
    ExampleDriver driver = new ExampleDriver(registry, config(Map.of("device.count", -1)), properties);
    assertThat(registry.health()).isEqualTo("CRITICAL the example driver gpu.example.com waits for a valid"
        + " configuration dev.nodelet.driver.example~gpu: device.count: must be between 0 and 10000, was -1; correct"
        + " it (etc/dev.nodelet.driver.example-gpu.cfg)");
    assertThat(registry.services(DeviceSnapshots.class)).isEmpty();
    assertThat(registry.services(ClaimPreparation.class)).isEmpty();
    assertThat(driver.collect().stream().map(m -> m.getMetadata().getName())).as("metrics meanwhile")
        .contains("nodelet_example_driver_prepared_claims");

    driver.modified(config(Map.of("device.count", 2)), properties);
    assertThat(registry.healthCheck()).isEmpty();
    assertThat(registry.services(DeviceSnapshots.class)).as("one service under both roles").containsExactly(driver);
    assertThat(registry.services(ClaimPreparation.class)).containsExactly(driver);
    Recording recorder = new Recording();
    driver.subscribe(recorder);
    assertThat(recorder.snapshots).singleElement().satisfies(pools -> assertThat(pools.get(0).devices()).hasSize(2));
    driver.deactivate();
    assertThat(registry.registered).isEmpty();
  }

  @Test
  void badChangesAreRefusedAndTheLastGoodSnapshotStays() {
    ExampleDriver driver = new ExampleDriver(new RecordingPublisher(), config(Map.of()), Map.of());
    Recording recording = new Recording();
    driver.subscribe(recording);
    List<List<Pool>> received = recording.snapshots;
    List<Pool> first = received.get(0);
    for (Map<String, Object> bad : List.<Map<String, Object>>of(
        Map.of("driver.name", "other.example.com"), Map.of("device.count", 1_000_000),
        Map.of("device.count", -3), Map.of("attributes", new String[] {"=x"}),
        Map.of("capacity", new String[] {"memory=1.5.5"}), Map.of("pool", ""))) {
      driver.modified(config(bad), Map.of());
    }
    assertThat(driver.driverName()).isEqualTo("gpu.example.com");
    assertThat(received).as("no snapshot for a refused change").containsExactly(first);

    driver.modified(config(Map.of("device.count", 2)), Map.of());
    assertThat(received).hasSize(2);
    assertThat(received.get(1).get(0).devices()).hasSize(2);
  }

  @Test
  void aPoolNameTheApiRefusesIsRejectedByTheControllerAndThePublishedSliceStays() {
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = server.newClient()) {
      String uid = client.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-a").endMetadata()
          .build()).create().getMetadata().getUid();
      ExampleDriver driver = new ExampleDriver(new RecordingPublisher(), config(Map.of()), Map.of());
      try (NodeResources controller = NodeResources.builder(client, "node-a")
          .nodeUid(() -> Optional.of(uid)).build()) {
        controller.start();
        controller.addDriver(driver);
        await().until(() -> client.resources(ResourceSlice.class).list().getItems().size() == 1);
        ResourceSlice published = client.resources(ResourceSlice.class).list().getItems().get(0);

        driver.modified(config(Map.of("pool", "Bad_Pool", "device.count", 7)), Map.of());
        assertThat(controller.driverStatuses()).singleElement().satisfies(status -> assertThat(status.lastError())
            .hasValueSatisfying(error -> assertThat(error).contains("pool \"Bad_Pool\": the name must be DNS "
                + "subdomains")));
        assertThat(client.resources(ResourceSlice.class).list().getItems()).containsExactly(published);
      }
    }
  }

  @Test
  void allocatedDevicesOfItsPoolArePreparedWithCdiIdsAndOthersFailTheClaim() {
    ExampleDriver driver = new ExampleDriver(new RecordingPublisher(), config(Map.of()), Map.of());
    var mine = new io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder()
        .withDriver("gpu.example.com").withPool("node-a").withDevice("dev-1").withRequest("gpu").build();
    var foreign = new io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder(mine)
        .withDevice("dev-9").build();

    Map<String, dev.nodelet.dra.PrepareResult> results = driver.prepare(List.of(
        new dev.nodelet.dra.ClaimRef("default", "ok", "uid-1", List.of(mine)),
        new dev.nodelet.dra.ClaimRef("default", "bad", "uid-2", List.of(foreign))));

    assertThat(results.get("uid-1").devices()).containsExactly(new dev.nodelet.dra.PreparedDevice(List.of("gpu"),
        "node-a", "dev-1", List.of("k8s.gpu.example.com/device=dev-1"), null));
    assertThat(results.get("uid-2").error()).isEqualTo("device node-a/dev-9 is not a device of pool node-a");
    assertThat(driver.prepare(List.of(new dev.nodelet.dra.ClaimRef("default", "ok", "uid-1", List.of(mine))))
        .get("uid-1")).as("preparing again gives the same devices").isEqualTo(results.get("uid-1"));
    assertThat(driver.unprepare(List.of(new dev.nodelet.dra.ClaimRef("default", "ok", "uid-1")))).isEmpty();
  }

  /** A .cfg file gives a multi-valued key as one string: comma-separated pairs are each one attribute. */
  @Test
  void oneStringWithCommasIsSeveralAttributes() {
    assertThat(ExampleDriver.pairs("attributes", config(Map.of("attributes", "model=xyz, gen=2")).attributes()))
        .containsExactly(Map.entry("model", "xyz"), Map.entry("gen", "2"));
    assertThat(ExampleDriver.pairs("attributes", config(Map.of("attributes", new String[] {"a=1", "b=x,c=true"}))
        .attributes())).containsOnlyKeys("a", "b", "c");
    assertThat(RecordingPublisher.waits(r -> new ExampleDriver(r, config(Map.of("attributes", "model=xyz,gen")),
        Map.of()), ExampleDriver::deactivate))
        .contains("attributes: entry \"gen\" is not name=value");
  }

  /** Records the snapshots of a subscription. */
  private static final class Recording implements SnapshotListener {
    final List<List<Pool>> snapshots = new CopyOnWriteArrayList<>();

    @Override
    public void onSnapshot(List<Pool> pools) {
      snapshots.add(pools);
    }

    @Override
    public void onError(Throwable cause, boolean retryable) {
    }

    @Override
    public void onCompleted() {
    }
  }
}
