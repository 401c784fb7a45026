package dev.nodelet.dra.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.configuration.RecordingPublisher;
import dev.nodelet.dra.DraStatus;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.runtime.ControllerOptions;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.testing.FixedNodeIdentity;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.osgi.util.converter.Converters;

/**
 * The DRA component's configuration: an invalid first value waits,
     holding readiness; later one is refused with the key named
 * while the controller, its drivers and the published slices stay; a valid one moves the drivers to a controller with
 * the new options.
 */
class DraComponentConfigurationTest {

  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final String NODE = "node-a";
  private static final String GPU = "gpu.example.com";

  private EmbeddedApiServer server;
  private KubernetesClient client;
  private ReflectorEngine reflectors;
  private NodeIdentity identity;
  private DraComponent component;

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
    client = server.newClient();
    reflectors = ReflectorEngine.builder(client).build();
    String uid = client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build())
        .create().getMetadata().getUid();
    identity = FixedNodeIdentity.named(NODE).withUid(uid);
  }

  @AfterEach
  void stop() {
    if (component != null) {
      component.deactivate();
    }
    reflectors.close();
    client.close();
    server.close();
  }

  private static DraConfiguration config(Map<String, Object> properties) {
    return Converters.standardConverter().convert(properties).to(DraConfiguration.class);
  }

  private List<ResourceSlice> slices() {
    return client.resources(ResourceSlice.class).list().getItems();
  }

  private static Pool pool(int devices) {
    return new Pool("pool-a", IntStream.range(0, devices)
        .mapToObj(i -> new DeviceBuilder().withName("dev-" + i).build()).toList());
  }

  /** Each invalid configuration with the start of the error it must give. */
  private static Map<Map<String, Object>, String> invalid() {
    Map<Map<String, Object>, String> invalid = new LinkedHashMap<>();
    invalid.put(Map.of("grace.period.seconds", -1), "grace.period.seconds: must be between 0 and 2592000, was -1");
    invalid.put(Map.of("grace.period.seconds", "soon"), "grace.period.seconds: not a whole number");
    invalid.put(Map.of("rate.limit.base.delay.millis", 0), "rate.limit.base.delay.millis: must be between 1");
    invalid.put(Map.of("rate.limit.base.delay.millis", 5000, "rate.limit.max.delay.seconds", 2),
        "rate.limit.max.delay.seconds: must be at least rate.limit.base.delay.millis (5000 ms), was 2 s");
    invalid.put(Map.of("rate.limit.qps", 0), "rate.limit.qps: must be above 0");
    invalid.put(Map.of("rate.limit.qps", Double.NaN), "rate.limit.qps: must be above 0");
    invalid.put(Map.of("rate.limit.burst", 0), "rate.limit.burst: must be between 1 and 1000000, was 0");
    invalid.put(Map.of("monitor.backoff.initial.seconds", 0), "monitor.backoff.initial.seconds: must be between 1");
    invalid.put(Map.of("monitor.backoff.initial.seconds", 60, "monitor.backoff.max.seconds", 10),
        "monitor.backoff.max.seconds: must be at least monitor.backoff.initial.seconds (60), was 10");
    invalid.put(Map.of("monitor.backoff.jitter.factor", -0.5), "monitor.backoff.jitter.factor: must be between 0");
    invalid.put(Map.of("resync.period.seconds", Long.MAX_VALUE), "resync.period.seconds: must be between 0");
    invalid.put(Map.of("max.devices.per.slice", 129), "max.devices.per.slice: must be between 1 and 128, was 129");
    invalid.put(Map.of("max.devices.per.slice", 0), "max.devices.per.slice: must be between 1 and 128, was 0");
    return invalid;
  }

  @Test
  void everyInvalidFirstValueWaitsNamingItsKey() {
    invalid().forEach((properties, error) -> assertThat(RecordingPublisher.waits(r -> new DraComponent(r, client,
        reflectors, identity, config(properties), Map.of()), DraComponent::deactivate)).as(properties.toString())
        .startsWith("CRITICAL the DRA node controller waits for a valid configuration dev.nodelet.dra: " + error));
  }

  @Test
  void anInvalidFirstConfigurationPublishesNothingUntilAValidOneBringsTheDriversSlices() {
    RecordingPublisher registry = new RecordingPublisher();
    component = new DraComponent(registry, client, reflectors, identity, config(Map.of("max.devices.per.slice", 0)),
        Map.of());
    TestDriver gpu = new TestDriver(GPU).snapshotOnSubscribe(List.of(pool(4)));
    component.addDriver(gpu);
    assertThat(registry.health()).contains("max.devices.per.slice: must be between 1 and 128, was 0");
    assertThat(registry.services(DraStatus.class)).isEmpty();
    assertThat(gpu.subscriptions).as("no controller subscribes").hasValue(0);
    assertThat(component.drivers()).isEmpty();

    component.modified(config(Map.of("max.devices.per.slice", 2)), Map.of("max.devices.per.slice", 2));
    // the waiting check went; the publishing check came with the status
    assertThat(registry.healthChecks()).containsOnlyKeys("nodelet-dra-publishing");
    assertThat(registry.services(DraStatus.class)).containsExactly(component);
    await().atMost(WAIT).until(() -> slices().size() == 2);
    assertThat(component.drivers()).singleElement().satisfies(status -> assertThat(status.driverName())
        .isEqualTo(GPU));
  }

  @Test
  void invalidChangesAreRefusedWhileTheDriversAndTheirSlicesStayAndValidOnesAreApplied() {
    component = new DraComponent(new RecordingPublisher(), client, reflectors, identity, config(Map.of()), Map.of());
    TestDriver gpu = new TestDriver(GPU).snapshotOnSubscribe(List.of(pool(4)));
    component.addDriver(gpu);
    await().atMost(WAIT).until(() -> slices().size() == 1);
    List<ResourceSlice> published = slices();
    ControllerOptions good = component.options();
    server.clearWrites();

    invalid().keySet().forEach(properties -> component.modified(config(properties), Map.of()));
    assertThat(component.options()).isEqualTo(good);
    assertThat(gpu.subscriptions).as("the driver was never moved").hasValue(1);
    assertThat(component.drivers()).singleElement().satisfies(status -> {
      assertThat(status.driverName()).isEqualTo(GPU);
      assertThat(status.lastError()).isEmpty();
    });
    assertThat(slices()).isEqualTo(published);
    assertThat(server.writes()).isEmpty();

    // a valid change: the driver moves to a controller that splits its pool in slices of 2
    component.modified(config(Map.of("max.devices.per.slice", 2)), Map.of());
    assertThat(component.options().maxDevicesPerSlice()).isEqualTo(2);
    assertThat(gpu.subscriptions).hasValue(2);
    await().atMost(WAIT).until(() -> slices().size() == 2);
    assertThat(slices()).allSatisfy(s -> assertThat(s.getSpec().getDevices()).hasSize(2));
    // the same options again change nothing
    component.modified(config(Map.of("max.devices.per.slice", 2)), Map.of());
    assertThat(gpu.subscriptions).hasValue(2);
  }
}
