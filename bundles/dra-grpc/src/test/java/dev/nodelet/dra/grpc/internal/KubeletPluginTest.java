package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

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
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
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
  private DriverFolders folders;

  @BeforeEach
  void folders() throws IOException {
    folders = new DriverFolders(temp);
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

  private RegisteredDriver registered(FakeDriver driver) {
    return folders.registered(driver);
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

    RegisteredDriver registered = registered(driver);
    assertThat(registered.protocol()).isEqualTo("v1.DRAPlugin");
    assertThat(registered.publishesOwnSlices()).isTrue();
    assertThat(registered.preparesClaims()).isTrue();
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

    RegisteredDriver registered = registered(driver);
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
    RegisteredDriver registered = registered(driver);
    driver.close();

    assertThatThrownBy(() -> registered.prepare(List.of(CLAIM)))
        .hasMessageContaining("NodePrepareResources of DRA driver gpu.example.com")
        .hasMessageContaining("UNAVAILABLE");
  }

  @Test
  void healthReportsArriveAndUnimplementedEndsTheStreamForGood() {
    var health = new DRAResourceHealthGrpc.DRAResourceHealthImplBase() {
      @Override
      public void nodeWatchResources(NodeWatchResourcesRequest request,
          StreamObserver<NodeWatchResourcesResponse> response) {
        response.onNext(NodeWatchResourcesResponse.newBuilder().addDevices(
            dev.nodelet.dra.grpc.kubelet.health.v1.DeviceHealth.newBuilder()
                .setDevice(DeviceIdentifier.newBuilder().setPoolName("node-a").setDeviceName("gpu-0"))
                .setHealth(HealthStatus.UNHEALTHY).setLastUpdatedTime(1_700_000_000L)
                .setHealthCheckTimeoutSeconds(5).setMessage("ECC errors")).build());
      }
    };
    FakeDriver withHealth = serve("gpu.example.com", List.of("v1.DRAPlugin", "v1.DRAResourceHealth"),
        new Plugin().bindService(), health.bindService());
    Recorder recorder = new Recorder();
    Subscription subscription = registered(withHealth).watchHealth(recorder);
    folders.closeLater(subscription);
    await().until(() -> !recorder.reports.isEmpty());
    DeviceHealth report = recorder.reports.get(0).get(0);
    assertThat(report.poolName()).isEqualTo("node-a");
    assertThat(report.health()).isEqualTo(DeviceHealth.Health.UNHEALTHY);
    assertThat(report.timeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(report.message()).isEqualTo("ECC errors");

    FakeDriver without = serve("nic.example.com", List.of("v1.DRAPlugin"), new Plugin().bindService());
    Recorder none = new Recorder();
    folders.closeLater(registered(without).watchHealth(none));
    await().until(() -> !none.errors.isEmpty());
    assertThat(none.errors).containsExactly(false);
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
