package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.dra.ClaimRef;
import dev.nodelet.dra.grpc.kubelet.dra.v1.DRAPluginGrpc;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodePrepareResourcesRequest;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodePrepareResourcesResponse;
import dev.nodelet.dra.grpc.pluginregistration.PluginInfo;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.util.converter.Converters;

/** {@code call.timeout.millis}: the deadline of a kubelet plugin's prepare and unprepare calls; 0 is the default. */
class CallTimeoutTest {

  @TempDir
  Path temp;

  private static GrpcDraComponent.Settings settings(Map<String, Object> properties) {
    return GrpcDraComponent.Settings.from(
        Converters.standardConverter().convert(properties).to(GrpcDraConfiguration.class));
  }

  @Test
  void zeroOrNothingIsTheKubeletsFortyFiveSecondsAndANegativeValueNamesTheKey() {
    assertThat(settings(Map.of()).callTimeout()).isEqualTo(Duration.ofSeconds(45));
    assertThat(settings(Map.of("call.timeout.millis", 0)).callTimeout()).isEqualTo(Duration.ofSeconds(45));
    assertThat(settings(Map.of("call.timeout.millis", 250)).callTimeout()).isEqualTo(Duration.ofMillis(250));
    assertThatThrownBy(() -> settings(Map.of("call.timeout.millis", -1)))
        .hasMessageStartingWith("call.timeout.millis: must be between 0 and");
  }

  /** Answers no prepare call until the test ends. */
  static final class Silent extends DRAPluginGrpc.DRAPluginImplBase {
    final CountDownLatch called = new CountDownLatch(1);

    @Override
    public void nodePrepareResources(NodePrepareResourcesRequest request,
        StreamObserver<NodePrepareResourcesResponse> response) {
      called.countDown();
    }
  }

  @Test
  void aPrepareThatIsNeverAnsweredFailsAfterTheCallTimeoutNamingTheDeadline() throws Exception {
    try (DriverFolders folders = new DriverFolders(temp)) {
      Path endpoint = folders.plugins.resolve("gpu.sock");
      PluginInfo info = PluginInfo.newBuilder().setType("DRAPlugin").setName("gpu.example.com")
          .setEndpoint(endpoint.toString()).addSupportedVersions("v1.DRAPlugin").build();
      Silent plugin = new Silent();
      FakeDriver driver = folders.closeLater(new FakeDriver(folders.registry.resolve("gpu.example.com-reg.sock"),
          endpoint, info, "rw-------", "rw-------", plugin.bindService()));
      KubeletPlugin registered = (KubeletPlugin) new Registrar(folders.transport, Duration.ofSeconds(5),
          settings(Map.of("call.timeout.millis", 300)).callTimeout()).register(driver.registrationSocket);

      long start = System.nanoTime();
      assertThatThrownBy(() -> registered.prepare(List.of(new ClaimRef("default", "gpu-claim", "uid-1"))))
          .hasMessageContaining("NodePrepareResources of DRA driver gpu.example.com")
          .hasMessageContaining("DEADLINE_EXCEEDED");
      assertThat(plugin.called.getCount()).isZero();
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(300),
          Duration.ofSeconds(30));
    }
  }
}
