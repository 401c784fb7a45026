package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.controller.DrivableScheduler;
import dev.nodelet.dra.ClaimRef;
import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.HealthListener;
import dev.nodelet.dra.PrepareResult;
import dev.nodelet.dra.PreparedDevice;
import dev.nodelet.dra.Subscription;
import dev.nodelet.dra.grpc.kubelet.dra.v1.Device;
import dev.nodelet.dra.grpc.kubelet.dra.v1.DRAPluginGrpc;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodePrepareResourceResponse;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodePrepareResourcesRequest;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodePrepareResourcesResponse;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodeUnprepareResourceResponse;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodeUnprepareResourcesRequest;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodeUnprepareResourcesResponse;
import dev.nodelet.dra.grpc.kubelet.health.v1.DRAResourceHealthGrpc;
import dev.nodelet.dra.grpc.kubelet.health.v1.DeviceIdentifier;
import dev.nodelet.dra.grpc.kubelet.health.v1.HealthStatus;
import dev.nodelet.dra.grpc.kubelet.health.v1.NodeWatchResourcesRequest;
import dev.nodelet.dra.grpc.kubelet.health.v1.NodeWatchResourcesResponse;
import dev.nodelet.dra.grpc.pluginregistration.PluginInfo;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationStatus;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Drivers written for the kubelet (type DRAPlugin, the kubelet's DRA API v1 or v1beta1, DRAResourceHealth) served on
 * real unix sockets in this JVM, registered through the registration folder.
 */
class KubeletPluginTest {

  private static final ClaimRef CLAIM = new ClaimRef("default", "gpu-claim", "uid-1");

  @TempDir
  Path temp;
  /** The time of the plugins' health back-off, moved by the tests. */
  private final DrivableScheduler time = new DrivableScheduler();
  private DriverFolders folders;

  @BeforeEach
  void folders() throws IOException {
    folders = new DriverFolders(temp, time);
    folders.startWatcher();
  }

  @AfterEach
  void close() throws Exception {
    folders.close();
  }

  private FakeDriver serve(String name, List<String> versions, ServerServiceDefinition... services) {
    Path endpoint = folders.plugins.resolve(name + ".sock");
    PluginInfo info = PluginInfo.newBuilder().setType("DRAPlugin").setName(name).setEndpoint(endpoint.toString())
        .addAllSupportedVersions(versions).build();
    return folders.closeLater(new FakeDriver(folders.registry.resolve(name + "-reg.sock"), endpoint, info,
        "rw-------", "rw-------", services));
  }

  private KubeletPlugin registered(FakeDriver driver) {
    return (KubeletPlugin) folders.registered(driver);
  }

  /** Prepares every claim with one device, fails claims named "broken"; records the calls. */
  static final class Plugin extends DRAPluginGrpc.DRAPluginImplBase {
    final List<String> calls = new CopyOnWriteArrayList<>();

    @Override
    public void nodePrepareResources(NodePrepareResourcesRequest request,
        StreamObserver<NodePrepareResourcesResponse> response) {
      NodePrepareResourcesResponse.Builder out = NodePrepareResourcesResponse.newBuilder();
      request.getClaimsList().forEach(c -> {
        calls.add("prepare " + c.getNamespace() + "/" + c.getName() + " " + c.getUid());
        out.putClaims(c.getUid(), c.getName().equals("broken")
            ? NodePrepareResourceResponse.newBuilder().setError("no such device").build()
            : NodePrepareResourceResponse.newBuilder().addDevices(Device.newBuilder().addRequestNames("gpu")
                .setPoolName("node-a").setDeviceName("gpu-0").addCdiDeviceIds("k8s.gpu.example.com/device=gpu-0")
                .setShareId("share-1")).build());
      });
      response.onNext(out.build());
      response.onCompleted();
    }

    @Override
    public void nodeUnprepareResources(NodeUnprepareResourcesRequest request,
        StreamObserver<NodeUnprepareResourcesResponse> response) {
      NodeUnprepareResourcesResponse.Builder out = NodeUnprepareResourcesResponse.newBuilder();
      request.getClaimsList().forEach(c -> {
        calls.add("unprepare " + c.getUid());
        out.putClaims(c.getUid(), NodeUnprepareResourceResponse.getDefaultInstance());
      });
      response.onNext(out.build());
      response.onCompleted();
    }
  }

  @Test
  void aKubeletPluginRegistersWithV1AndPreparesAndUnpreparesClaims() {
    Plugin plugin = new Plugin();
    FakeDriver driver = serve("gpu.example.com", List.of("v1.DRAPlugin", "v1beta1.DRAPlugin"),
        plugin.bindService());

    KubeletPlugin registered = registered(driver);
    assertThat(registered.protocol()).isEqualTo("v1.DRAPlugin");
    assertThat(registered.roles()).as("no devices to Nodelet, no health service advertised").containsExactly(
        "dev.nodelet.dra.ClaimPreparation", "dev.nodelet.dra.SelfPublishedSlices");
    assertThat(driver.statuses).containsExactly(RegistrationStatus.newBuilder().setPluginRegistered(true).build());

    ClaimRef broken = new ClaimRef("default", "broken", "uid-2");
    Map<String, PrepareResult> results = registered.prepare(List.of(CLAIM, broken));
    assertThat(results.get("uid-1")).isEqualTo(PrepareResult.prepared(List.of(new PreparedDevice(List.of("gpu"),
        "node-a", "gpu-0", List.of("k8s.gpu.example.com/device=gpu-0"), "share-1"))));
    assertThat(results.get("uid-2")).isEqualTo(PrepareResult.failed("no such device"));
    assertThat(registered.unprepare(List.of(CLAIM))).isEmpty();
    assertThat(plugin.calls).containsExactly("prepare default/gpu-claim uid-1", "prepare default/broken uid-2",
        "unprepare uid-1");
  }

  @Test
  void v1beta1IsUsedWhenThePluginSupportsNoNewerVersion() {
    var plugin = new dev.nodelet.dra.grpc.kubelet.dra.v1beta1.DRAPluginGrpc.DRAPluginImplBase() {
      @Override
      public void nodePrepareResources(dev.nodelet.dra.grpc.kubelet.dra.v1beta1.NodePrepareResourcesRequest request,
          StreamObserver<dev.nodelet.dra.grpc.kubelet.dra.v1beta1.NodePrepareResourcesResponse> response) {
        var out = dev.nodelet.dra.grpc.kubelet.dra.v1beta1.NodePrepareResourcesResponse.newBuilder();
        request.getClaimsList().forEach(c -> out.putClaims(c.getUid(),
            dev.nodelet.dra.grpc.kubelet.dra.v1beta1.NodePrepareResourceResponse.newBuilder().addDevices(
                dev.nodelet.dra.grpc.kubelet.dra.v1beta1.Device.newBuilder().setPoolName("p").setDeviceName("nic-0")
                    .addCdiDeviceIds("k8s.nic.example.com/device=nic-0")).build()));
        response.onNext(out.build());
        response.onCompleted();
      }
    };
    FakeDriver driver = serve("nic.example.com", List.of("v1beta1.DRAPlugin"), plugin.bindService());

    KubeletPlugin registered = registered(driver);
    assertThat(registered.protocol()).isEqualTo("v1beta1.DRAPlugin");
    assertThat(registered.prepare(List.of(CLAIM)).get("uid-1").devices()).containsExactly(
        new PreparedDevice(List.of(), "p", "nic-0", List.of("k8s.nic.example.com/device=nic-0"), null));
  }

  @Test
  void aPluginWithNoKnownVersionIsRefusedAndToldWhy() {
    FakeDriver driver = serve("old.example.com", List.of("1.0.0"));

    await().until(() -> !driver.statuses.isEmpty());
    RegistrationStatus status = driver.statuses.get(0);
    assertThat(status.getPluginRegistered()).isFalse();
    assertThat(status.getError()).contains("old.example.com", "[1.0.0]", "v1.DRAPlugin");
    assertThat(folders.published).isEmpty();
  }

  @Test
  void aPluginThatIsGoneFailsPrepareWithAnErrorNamingIt() throws Exception {
    FakeDriver driver = serve("gpu.example.com", List.of("v1.DRAPlugin"), new Plugin().bindService());
    KubeletPlugin registered = registered(driver);
    driver.close();

    assertThatThrownBy(() -> registered.prepare(List.of(CLAIM)))
        .hasMessageContaining("NodePrepareResources of DRA driver gpu.example.com")
        .hasMessageContaining("UNAVAILABLE");
  }

  /** A v1 health service: answers the first {@code unimplemented} calls "Unimplemented", records every call. */
  static final class Health extends DRAResourceHealthGrpc.DRAResourceHealthImplBase {
    final List<Long> calls = new CopyOnWriteArrayList<>();
    private final int unimplemented;
    private final String message;

    Health(int unimplemented, String message) {
      this.unimplemented = unimplemented;
      this.message = message;
    }

    static NodeWatchResourcesResponse report(HealthStatus status, String message) {
      return NodeWatchResourcesResponse.newBuilder().addDevices(
          dev.nodelet.dra.grpc.kubelet.health.v1.DeviceHealth.newBuilder()
              .setDevice(DeviceIdentifier.newBuilder().setPoolName("node-a").setDeviceName("gpu-0"))
              .setHealth(status).setLastUpdatedTime(1_700_000_000L)
              .setHealthCheckTimeoutSeconds(5).setMessage(message)).build();
    }

    @Override
    public void nodeWatchResources(NodeWatchResourcesRequest request,
        StreamObserver<NodeWatchResourcesResponse> response) {
      calls.add(System.nanoTime());
      if (calls.size() <= unimplemented) {
        response.onError(Status.UNIMPLEMENTED.withDescription("not yet").asRuntimeException());
      } else {
        response.onNext(report(HealthStatus.UNHEALTHY, message)); // the stream stays open
      }
    }
  }

  @Test
  void v1HealthReportsArriveWithMessageAndTimeoutOnTheConnectionOfTheDraCalls() {
    Health health = new Health(0, "ECC errors");
    FakeDriver driver = serve("gpu.example.com", List.of("v1.DRAPlugin", "v1.DRAResourceHealth"),
        new Plugin().bindService(), health.bindService());
    KubeletPlugin registered = registered(driver);
    assertThat(registered.prepare(List.of(CLAIM))).containsKey("uid-1");
    Recorder recorder = new Recorder();
    folders.closeLater(registered.watchHealth(recorder));
    await().until(() -> !recorder.reports.isEmpty());
    assertThat(recorder.reports.get(0)).containsExactly(new DeviceHealth("node-a", "gpu-0",
        DeviceHealth.Health.UNHEALTHY, Instant.ofEpochSecond(1_700_000_000L), Duration.ofSeconds(5), "ECC errors"));
    assertThat(registered.unprepare(List.of(CLAIM))).isEmpty();

    // prepare, the health stream and unprepare share one connection to the endpoint (kubernetes#134125)
    assertThat(driver.endpointConnections).hasValue(1);
  }

  @Test
  void v1HealthIsPreferredAndV1alpha1IsWatchedWhenItIsTheOnlyOneAdvertised() {
    var alpha = new dev.nodelet.dra.grpc.kubelet.health.v1alpha1.DRAResourceHealthGrpc.DRAResourceHealthImplBase() {
      @Override
      public void nodeWatchResources(dev.nodelet.dra.grpc.kubelet.health.v1alpha1.NodeWatchResourcesRequest request,
          StreamObserver<dev.nodelet.dra.grpc.kubelet.health.v1alpha1.NodeWatchResourcesResponse> response) {
        response.onNext(dev.nodelet.dra.grpc.kubelet.health.v1alpha1.NodeWatchResourcesResponse.newBuilder()
            .addDevices(dev.nodelet.dra.grpc.kubelet.health.v1alpha1.DeviceHealth.newBuilder()
                .setDevice(dev.nodelet.dra.grpc.kubelet.health.v1alpha1.DeviceIdentifier.newBuilder()
                    .setPoolName("node-a").setDeviceName("gpu-0"))
                .setHealth(dev.nodelet.dra.grpc.kubelet.health.v1alpha1.HealthStatus.HEALTHY)
                .setLastUpdatedTime(1_700_000_000L).setMessage("v1alpha1")).build());
      }
    };
    FakeDriver both = serve("gpu.example.com", List.of("v1.DRAPlugin", "v1alpha1.DRAResourceHealth",
        "v1.DRAResourceHealth"), new Plugin().bindService(), alpha.bindService(), new Health(0, "v1").bindService());
    Recorder fromBoth = new Recorder();
    folders.closeLater(registered(both).watchHealth(fromBoth));
    await().until(() -> !fromBoth.reports.isEmpty());
    assertThat(fromBoth.reports.get(0).get(0).message()).isEqualTo("v1");

    FakeDriver onlyAlpha = serve("nic.example.com", List.of("v1.DRAPlugin", "v1alpha1.DRAResourceHealth"),
        new Plugin().bindService(), alpha.bindService(), new Health(0, "v1").bindService());
    Recorder fromAlpha = new Recorder();
    folders.closeLater(registered(onlyAlpha).watchHealth(fromAlpha));
    await().until(() -> !fromAlpha.reports.isEmpty());
    // no timeout in the report: the kubelet's 30 s
    assertThat(fromAlpha.reports.get(0)).containsExactly(new DeviceHealth("node-a", "gpu-0",
        DeviceHealth.Health.HEALTHY, Instant.ofEpochSecond(1_700_000_000L), Duration.ofSeconds(30), "v1alpha1"));
  }

  @Test
  void aPluginThatAdvertisesNoHealthIsNeverAskedForIt() {
    Health health = new Health(0, "not advertised");
    FakeDriver driver = serve("nic.example.com", List.of("v1.DRAPlugin"), new Plugin().bindService(),
        health.bindService());
    KubeletPlugin registered = registered(driver);

    assertThat(registered.roles()).doesNotContain("dev.nodelet.dra.DeviceHealthSource");
    assertThat(registered.watchHealth(new Recorder())).isNull();
    // a call would have arrived by the time prepare answers on the same connection
    assertThat(registered.prepare(List.of(CLAIM))).containsKey("uid-1");
    assertThat(health.calls).isEmpty();
  }

  @Test
  void unimplementedHealthIsAskedAgainAfterADoublingCappedDelayUntilTheDriverReports() {
    Health health = new Health(4, "ECC errors");
    FakeDriver driver = serve("gpu.example.com", List.of("v1.DRAPlugin", "v1.DRAResourceHealth"),
        new Plugin().bindService(), health.bindService());
    Recorder recorder = new Recorder();
    folders.closeLater(registered(driver).watchHealth(recorder));

    // 100 ms doubling, capped at 400 ms (DriverFolders); the driver is not asked again a moment before
    for (Duration delay : List.of(Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(400),
        Duration.ofMillis(400))) {
      await().until(() -> time.pending() == 1); // "Unimplemented" has arrived and the retry waits
      int calls = health.calls.size();
      assertThat(time.pendingDelays()).containsExactly(delay);
      time.advance(delay.minusMillis(1));
      assertThat(time.pending()).isEqualTo(1);
      assertThat(health.calls).hasSize(calls);
      time.advance(Duration.ofMillis(1));
      assertThat(time.pending()).isZero();
    }
    await().until(() -> !recorder.reports.isEmpty());
    assertThat(health.calls).hasSize(5);
    assertThat(recorder.errors).isEmpty(); // the watch never ended
    assertThat(recorder.reports.get(0).get(0).health()).isEqualTo(DeviceHealth.Health.UNHEALTHY);
  }

  @Test
  void aNewWatchDuringTheBackoffDoesNotReachTheDriverBeforeTheDelayIsOver() {
    Health health = new Health(1, "ECC errors");
    FakeDriver driver = serve("gpu.example.com", List.of("v1.DRAPlugin", "v1.DRAResourceHealth"),
        new Plugin().bindService(), health.bindService());
    KubeletPlugin registered = registered(driver);
    Subscription first = registered.watchHealth(new Recorder());
    // "Unimplemented" has arrived: the plugin's back-off runs
    await().until(() -> ((KubeletPlugin) registered).healthRetryInNanos() > 0);
    // a consumer that gives up and watches again at once, as a retry loop would
    first.close();
    Recorder again = new Recorder();
    folders.closeLater(registered.watchHealth(again));

    assertThat(time.pendingDelays()).containsExactly(Duration.ofMillis(100));
    time.advance(Duration.ofMillis(99));
    assertThat(health.calls).hasSize(1);
    time.advance(Duration.ofMillis(1));
    await().until(() -> !again.reports.isEmpty());
    assertThat(health.calls).hasSize(2);
  }

  @Test
  void devicesTurnUnknownWhenTheDriverStopsServingHealthAndComeBackWhenItServesAgain() {
    AtomicInteger calls = new AtomicInteger();
    var health = new DRAResourceHealthGrpc.DRAResourceHealthImplBase() {
      @Override
      public void nodeWatchResources(NodeWatchResourcesRequest request,
          StreamObserver<NodeWatchResourcesResponse> response) {
        response.onNext(Health.report(HealthStatus.UNHEALTHY, "ECC errors"));
        if (calls.incrementAndGet() == 1) {
          response.onError(Status.UNIMPLEMENTED.asRuntimeException()); // a driver restarted without health
        }
      }
    };
    FakeDriver driver = serve("gpu.example.com", List.of("v1.DRAPlugin", "v1.DRAResourceHealth"),
        new Plugin().bindService(), health.bindService());
    Recorder recorder = new Recorder();
    folders.closeLater(registered(driver).watchHealth(recorder));

    await().until(() -> recorder.reports.size() == 2 && time.pending() == 1);
    time.advance(DriverFolders.HEALTH_BACKOFF);
    await().until(() -> recorder.reports.size() == 3);
    assertThat(recorder.reports).extracting(r -> r.get(0).health()).containsExactly(DeviceHealth.Health.UNHEALTHY,
        DeviceHealth.Health.UNKNOWN, DeviceHealth.Health.UNHEALTHY);
    assertThat(recorder.errors).isEmpty();
  }

  @Test
  void aBrokenHealthStreamEndsTheWatchOnceAsRetryable() throws Exception {
    FakeDriver driver = serve("gpu.example.com", List.of("v1.DRAPlugin", "v1.DRAResourceHealth"),
        new Plugin().bindService(), new Health(0, "ok").bindService());
    Recorder recorder = new Recorder();
    folders.closeLater(registered(driver).watchHealth(recorder));
    await().until(() -> !recorder.reports.isEmpty());

    driver.killEndpoint();
    await().until(() -> !recorder.errors.isEmpty());
    assertThat(recorder.errors).containsExactly(true);
  }

  private static final class Recorder implements HealthListener {
    final List<List<DeviceHealth>> reports = new CopyOnWriteArrayList<>();
    final List<Boolean> errors = new CopyOnWriteArrayList<>();

    @Override
    public void onHealth(List<DeviceHealth> devices) {
      reports.add(devices);
    }

    @Override
    public void onError(Throwable cause, boolean retryable) {
      errors.add(retryable);
    }
  }
}
