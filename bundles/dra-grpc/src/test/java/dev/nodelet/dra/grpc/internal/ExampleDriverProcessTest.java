package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import dev.nodelet.dra.ClaimRef;
import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.HealthListener;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.PrepareResult;
import dev.nodelet.dra.PreparedDevice;
import dev.nodelet.dra.SnapshotListener;
import dev.nodelet.dra.Subscription;
import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimManager;
import dev.nodelet.dra.claims.ContainerDevices;
import dev.nodelet.dra.claims.DeviceHealthInfo;
import dev.nodelet.dra.runtime.ControllerOptions;
import dev.nodelet.dra.runtime.NodeResources;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.RecordedWrite;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The example drivers of {@code examples/} as child processes, registered through real unix sockets against the
 * embedded API server: the Nodelet driver of {@code examples/external-driver} published by the real controller, and
 * the driver of {@code examples/kubelet-driver}, written for the kubelet, which publishes its own slice, prepares a
 * pod's claim over the kubelet's DRA API v1 and reports health; killed, its claim's unprepare fails visibly, and
 * restarted, the unprepare succeeds.
 */
class ExampleDriverProcessTest {

  private static final String EXTERNAL_DRIVER = "gpu.example.com";
  private static final String KUBELET_DRIVER = "gpu.kubelet.example.com";
  private static final String NODE = "node-a";

  @AutoClose
  private final ExampleProcesses drivers = new ExampleProcesses();

  @Test
  void aKilledDriverIsRetriedWithBackoffAndItsRestartCausesNoSliceChurn(@TempDir Path temp) throws Exception {
    // a short monitor backoff keeps the test fast; the grace period is the default 30 s
    ControllerOptions options = new ControllerOptions(Duration.ofSeconds(30), Duration.ofMillis(5),
        Duration.ofSeconds(1), 10, 100, Duration.ofMillis(100), Duration.ofMillis(400), 1.0, Duration.ZERO, 128);
    Recorder recorder = new Recorder();
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = server.newClient()) {
      String uid = client.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata()
          .build()).create().getMetadata().getUid();
      try (NodeResources controller = NodeResources.builder(client, NODE)
          .nodeUid(() -> Optional.of(uid)).options(options).build();
          DriverFolders folders = new DriverFolders(temp)) {
        controller.start();
        folders.startWatcher(Duration.ofSeconds(2), (driver, socket) -> {
          DeviceSnapshots recorded = recorder.wrap((DeviceSnapshots) driver);
          controller.addDriver(recorded);
          return () -> controller.removeDriver(recorded);
        });

        Process first = startExternalDriver(folders, 3);
        await().until(() -> devices(client) == 3);
        ResourceSlice slice = client.resources(ResourceSlice.class).list().getItems().get(0);
        assertThat(slice.getSpec().getDriver()).isEqualTo(EXTERNAL_DRIVER);
        assertThat(slice.getSpec().getPool().getName()).isEqualTo("example");
        assertThat(slice.getSpec().getDevices().get(0).getCapacity().get("memory").getValue().getAmount())
            .isEqualTo("16");
        assertThat(slice.getSpec().getDevices().get(0).getAttributes()).as("--attribute over the example's own")
            .containsEntry("model", new DeviceAttribute(null, null, "h100", null))
            .containsEntry("ecc", new DeviceAttribute(true, null, null, null))
            .containsEntry("index", new DeviceAttribute(null, 0L, null, null));
        await().until(() -> sliceWrites(server).size() == 1);
        server.clearWrites();

        // a change on the driver's side is one update
        ExampleProcesses.send(first, "5");
        await().until(() -> devices(client) == 5);
        assertThat(sliceWrites(server)).extracting(RecordedWrite::verb).containsExactly(Verb.UPDATE);
        server.clearWrites();

        // killed: the stream fails, and the controller keeps trying with backoff while nobody answers
        first.destroyForcibly().waitFor();
        await().until(() -> recorder.retryableFailures.size() >= 3);
        assertThat(recorder.retryableFailures.get(0)).contains("ListAndWatchResources of DRA driver " + EXTERNAL_DRIVER
            + " on " + folders.plugins.resolve(EXTERNAL_DRIVER).resolve("dra.sock") + " failed: UNAVAILABLE");
        assertThat(recorder.nonRetryableFailures).isEmpty();

        // restarted within the grace period with the same devices: registered again, not a single write
        int snapshotsBefore = recorder.snapshots.get();
        startExternalDriver(folders, 5);
        await().until(() -> recorder.snapshots.get() > snapshotsBefore);
        await().during(Duration.ofMillis(500)).until(() -> sliceWrites(server).isEmpty());
        assertThat(devices(client)).isEqualTo(5);
        assertThat(controller.driverError(EXTERNAL_DRIVER)).isEmpty();
      }
    }
  }

  private Process startExternalDriver(DriverFolders folders, int devices) throws IOException {
    return drivers.start(ProcessBuilder.Redirect.INHERIT, "dev.nodelet.examples.externaldriver.ExternalDriver",
        folders.args(EXTERNAL_DRIVER, "--devices", String.valueOf(devices), "--attribute", "model=h100",
            "--attribute", "ecc=true"));
  }

  private static int devices(KubernetesClient client) {
    return client.resources(ResourceSlice.class).list().getItems().stream()
        .mapToInt(s -> s.getSpec().getDevices().size()).sum();
  }

  private static List<RecordedWrite> sliceWrites(EmbeddedApiServer server) {
    return server.writes().stream().filter(w -> w.resource().equals("resourceslices")).toList();
  }

  /** Wraps each registered driver so the test sees what the controller's monitor sees. */
  private static final class Recorder {
    final AtomicInteger snapshots = new AtomicInteger();
    final List<String> retryableFailures = new CopyOnWriteArrayList<>();
    final List<String> nonRetryableFailures = new CopyOnWriteArrayList<>();

    DeviceSnapshots wrap(DeviceSnapshots driver) {
      return new DeviceSnapshots() {
        @Override
        public String driverName() {
          return driver.driverName();
        }

        @Override
        public Subscription subscribe(SnapshotListener listener) {
          return driver.subscribe(new SnapshotListener() {
            @Override
            public void onSnapshot(List<Pool> pools) {
              snapshots.incrementAndGet();
              listener.onSnapshot(pools);
            }

            @Override
            public void onError(Throwable cause, boolean retryable) {
              (retryable ? retryableFailures : nonRetryableFailures).add(cause.getMessage());
              listener.onError(cause, retryable);
            }

            @Override
            public void onCompleted() {
              listener.onCompleted();
            }
          });
        }
      };
    }
  }

  @Test
  void aKubeletDriverPreparesAndReportsHealthAndAKilledDriversUnprepareWaitsForItsRestart(@TempDir Path temp)
      throws Exception {
    Path log = temp.resolve("driver.log");
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = server.newClient();
        ClaimManager manager = ClaimManager.builder(client, NODE).stateDirectory(temp.resolve("state"))
            .retry(Duration.ofMillis(100), Duration.ofMillis(500)).healthRetry(Duration.ofMillis(200)).build();
        DriverFolders folders = new DriverFolders(temp)) {
      manager.start();
      folders.startWatcher(Duration.ofSeconds(20), (driver, socket) -> {
        KubeletPlugin plugin = (KubeletPlugin) driver; // registered as ClaimPreparation and DeviceHealthSource
        manager.addDriver(plugin);
        manager.addHealthSource(plugin);
        return () -> {
          manager.removeDriver(plugin);
          manager.removeHealthSource(plugin);
        };
      });
      Process first = startKubeletDriver(server, folders, log);

      // like a real driver, it publishes its own slice
      await().atMost(Duration.ofSeconds(30)).until(() -> client.resources(ResourceSlice.class).list().getItems()
          .stream().anyMatch(s -> KUBELET_DRIVER.equals(s.getSpec().getDriver())));
      assertThat(client.resources(ResourceSlice.class).withName(NODE + "-" + KUBELET_DRIVER).get().getSpec()
          .getDevices()).allSatisfy(d -> assertThat(d.getAttributes())
              .containsEntry("driverVersion", new DeviceAttribute(null, null, null, "1.2.3")));

      Pod pod = allocatedPod(client);
      manager.podUpdated(pod);
      await().atMost(Duration.ofSeconds(30)).until(() -> state(manager) == ClaimInfo.State.PREPARED);
      assertThat(manager.containers()).extracting(ContainerDevices::cdiDeviceIds)
          .containsExactly(List.of("k8s." + KUBELET_DRIVER + "/device=dev-0"));
      await().until(() -> health(manager, "dev-0") == DeviceHealth.Health.HEALTHY);
      ExampleProcesses.send(first, "unhealthy dev-0");
      await().until(() -> health(manager, "dev-0") == DeviceHealth.Health.UNHEALTHY);

      first.destroyForcibly().waitFor();
      manager.podRemoved(pod);
      await().atMost(Duration.ofSeconds(30)).until(() -> Optional.ofNullable(info(manager)).map(ClaimInfo::error)
          .orElse("").contains("unpreparing with DRA driver " + KUBELET_DRIVER + " failed"));
      assertThat(info(manager).state()).isEqualTo(ClaimInfo.State.UNPREPARING);

      startKubeletDriver(server, folders, log);
      await().atMost(Duration.ofSeconds(30)).until(() -> manager.claims().isEmpty());
      // unprepare is idempotent: a call that outlived its deadline on a busy machine is repeated, as the kubelet does
      List<String> calls = Files.readAllLines(log).stream()
          .filter(l -> l.startsWith("prepared") || l.startsWith("unprepared")).toList();
      assertThat(calls).first().isEqualTo("prepared default/gpu-claim");
      assertThat(calls.subList(1, calls.size())).isNotEmpty().containsOnly("unprepared default/gpu-claim");
    }
  }

  @Test
  void theKubeletDriverSpeaksDraV1AndHealthV1WithShareIdsMessagesAndItsHealthTimeout(@TempDir Path temp)
      throws Exception {
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = server.newClient();
        DriverFolders folders = new DriverFolders(temp)) {
      folders.startWatcher();
      Process driver = drivers.start(ProcessBuilder.Redirect.INHERIT,
          "dev.nodelet.examples.kubeletdriver.KubeletDriver", folders.args(KUBELET_DRIVER, "--devices", "2",
              "--server", server.url(), "--node", NODE, "--health-timeout", "7"));
      Path socket = folders.registry.resolve(KUBELET_DRIVER + "-reg.sock");
      await().atMost(Duration.ofSeconds(30)).until(() -> folders.published.containsKey(socket));
      KubeletPlugin plugin = (KubeletPlugin) folders.published.get(socket);
      assertThat(plugin.protocol()).isEqualTo(KubeletPlugin.V1);
      assertThat(plugin.healthProtocol()).isEqualTo(KubeletPlugin.HEALTH_V1);

      List<List<DeviceHealth>> reports = new CopyOnWriteArrayList<>();
      folders.closeLater(plugin.watchHealth(new HealthListener() {
        @Override
        public void onHealth(List<DeviceHealth> devices) {
          reports.add(devices);
        }

        @Override
        public void onError(Throwable cause, boolean retryable) {
          reports.add(List.of());
        }
      }));
      await().until(() -> !reports.isEmpty());
      assertThat(reports.get(0)).extracting(DeviceHealth::deviceName, DeviceHealth::health, DeviceHealth::timeout,
          DeviceHealth::message).containsExactlyInAnyOrder(
              tuple("dev-0", DeviceHealth.Health.HEALTHY, Duration.ofSeconds(7), ""),
              tuple("dev-1", DeviceHealth.Health.HEALTHY, Duration.ofSeconds(7), ""));
      ExampleProcesses.send(driver, "unhealthy dev-0 ECC errors");
      await().until(() -> reports.size() == 2);
      assertThat(reports.get(1)).filteredOn(d -> d.deviceName().equals("dev-0"))
          .extracting(DeviceHealth::health, DeviceHealth::message)
          .containsExactly(tuple(DeviceHealth.Health.UNHEALTHY, "ECC errors"));

      // a share of a device with consumable capacity comes back as the device's share ID
      ResourceClaim claim = client.resources(ResourceClaim.class).inNamespace("default").resource(
          new ResourceClaimBuilder().withNewMetadata().withNamespace("default").withName("shared").endMetadata()
              .withNewSpec().withNewDevices().addNewRequest().withName("gpu").withNewExactly()
              .withDeviceClassName("gpu.example.com").endExactly().endRequest().endDevices().endSpec().build())
          .create();
      String shareId = "3f5b6c1e-8d2a-4e7b-9c10-2a4d6e8f0b12";
      claim.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addNewResult()
          .withDriver(KUBELET_DRIVER).withPool(NODE).withDevice("dev-1").withRequest("gpu").withShareID(shareId)
          .endResult().endDevices().endAllocation().build());
      client.resources(ResourceClaim.class).inNamespace("default").resource(claim).updateStatus();
      PrepareResult result = plugin.prepare(List.of(new ClaimRef("default", "shared",
          claim.getMetadata().getUid()))).get(claim.getMetadata().getUid());
      assertThat(result.devices()).containsExactly(new PreparedDevice(List.of("gpu"), NODE, "dev-1",
          List.of("k8s." + KUBELET_DRIVER + "/device=dev-1"), shareId));
    }
  }

  private static Pod allocatedPod(KubernetesClient client) {
    Pod pod = client.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata()
        .withNamespace("default").withName("trainer").endMetadata().withNewSpec().withNodeName(NODE)
        .addNewResourceClaim().withName("gpu").withResourceClaimName("gpu-claim").endResourceClaim()
        .addToContainers(new ContainerBuilder().withName("main").withImage("busybox").withNewResources()
            .addNewClaim().withName("gpu").endClaim().endResources().build())
        .endSpec().build()).create();
    ResourceClaim claim = client.resources(ResourceClaim.class).inNamespace("default").resource(
        new ResourceClaimBuilder().withNewMetadata().withNamespace("default").withName("gpu-claim").endMetadata()
            .withNewSpec().withNewDevices().addNewRequest().withName("gpu").withNewExactly()
            .withDeviceClassName("gpu.example.com").endExactly().endRequest().endDevices().endSpec().build())
        .create();
    claim.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addNewResult()
        .withDriver(KUBELET_DRIVER).withPool(NODE).withDevice("dev-0").withRequest("gpu").endResult().endDevices()
        .endAllocation().addNewReservedFor().withResource("pods").withName("trainer")
        .withUid(pod.getMetadata().getUid()).endReservedFor().build());
    client.resources(ResourceClaim.class).inNamespace("default").resource(claim).updateStatus();
    return pod;
  }

  private static ClaimInfo info(ClaimManager manager) {
    return manager.claims().stream().filter(c -> c.name().equals("gpu-claim")).findFirst().orElse(null);
  }

  private static ClaimInfo.State state(ClaimManager manager) {
    ClaimInfo info = info(manager);
    return info == null ? null : info.state();
  }

  private static DeviceHealth.Health health(ClaimManager manager, String device) {
    return manager.health().stream().filter(h -> h.device().equals(device)).map(DeviceHealthInfo::health)
        .findFirst().orElse(null);
  }

  private Process startKubeletDriver(EmbeddedApiServer server, DriverFolders folders, Path log)
      throws IOException {
    return drivers.start(ProcessBuilder.Redirect.appendTo(log.toFile()),
        "dev.nodelet.examples.kubeletdriver.KubeletDriver",
        folders.args(KUBELET_DRIVER, "--devices", "2", "--server", server.url(), "--node", NODE, "--attribute",
            "driverVersion=1.2.3"));
  }
}
