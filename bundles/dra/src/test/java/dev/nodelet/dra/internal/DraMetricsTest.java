package dev.nodelet.dra.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.dra.DraStatus;
import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.SliceSummary;
import dev.nodelet.dra.runtime.ControllerOptions;
import dev.nodelet.dra.runtime.ManualScheduler;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import dev.nodelet.testing.metrics.Scrape;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The controller's metrics follow its writes, syncs, drivers, slices and devices on the embedded API server. */
class DraMetricsTest {

  private static final String NODE = "node-a";
  private static final String GPU = "gpu.example.com";

  private final EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
  private final KubernetesClient client = server.newClient();
  private final ManualScheduler time = new ManualScheduler();
  private NodeResourcesController controller;
  private final DraMetrics metrics = new DraMetrics(new DraStatus() {
    @Override
    public String nodeName() {
      return NODE;
    }

    @Override
    public List<DriverStatus> drivers() {
      return controller.driverStatuses();
    }

    @Override
    public List<SliceSummary> slices() {
      return controller.slices();
    }
  });

  @AfterEach
  void stop() {
    controller.close();
    client.close();
    server.close();
  }

  private String scrape() {
    return Scrape.text(metrics::collect);
  }

  private double value(String series) {
    return Scrape.value(metrics::collect, series);
  }

  private static Pool pool(String name, int devices) {
    return new Pool(name, IntStream.range(0, devices)
        .mapToObj(i -> new DeviceBuilder().withName(String.format("dev-%03d", i)).build()).toList());
  }

  @Test
  void writesSyncsDriversSlicesAndDevices() {
    String nodeUid = client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata()
        .build()).create().getMetadata().getUid();
    controller = NodeResourcesController.builder(client, NODE).nodeUid(() -> Optional.of(nodeUid)).scheduler(time)
        .options(ControllerOptions.DEFAULTS).random(() -> 0.0).metrics(metrics).build();
    controller.start();
    TestDriver gpu = new TestDriver(GPU);
    controller.addDriver(gpu);
    assertThat(value("nodelet_dra_drivers{state=\"monitoring\"}")).isEqualTo(1);

    gpu.publish(List.of(pool("pool-a", 3), pool("pool-b", 2)));
    await().until(() -> value("nodelet_dra_resource_slices{driver=\"" + GPU + "\"}") == 2);
    assertThat(value("nodelet_dra_devices{driver=\"" + GPU + "\"}")).isEqualTo(5);
    // a write is counted once its request returns, which may be after the informer saw the slice
    await().until(() -> value("nodelet_dra_slice_writes_total{verb=\"create\"}") == 2);
    assertThat(server.requestCount(Verb.CREATE, "resourceslices")).isEqualTo(2);
    assertThat(value("nodelet_dra_sync_duration_seconds_count")).isGreaterThanOrEqualTo(1);

    server.failNext(Verb.UPDATE, "resourceslices", 1, 500);
    gpu.publish(List.of(pool("pool-a", 4), pool("pool-b", 2)));
    await().until(() -> value("nodelet_dra_sync_errors_total") == 1);
    time.advance(Duration.ofSeconds(1));
    await().until(() -> value("nodelet_dra_devices{driver=\"" + GPU + "\"}") == 6);
    await().until(() -> value("nodelet_dra_slice_writes_total{verb=\"update\"}") == 1);

    gpu.publish(List.of(pool("pool-a", 4)));
    await().until(() -> value("nodelet_dra_slice_writes_total{verb=\"delete\"}") == 1);
    await().until(() -> value("nodelet_dra_resource_slices{driver=\"" + GPU + "\"}") == 1);
  }
}
