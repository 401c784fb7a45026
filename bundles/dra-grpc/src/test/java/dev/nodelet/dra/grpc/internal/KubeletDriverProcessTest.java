package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimManager;
import dev.nodelet.dra.claims.ContainerDevices;
import dev.nodelet.dra.claims.DeviceHealthInfo;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
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
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The driver of {@code examples/kubelet-driver}, written for the kubelet, as a child process on real unix sockets:
 * it publishes its own slice, registers through the registration folder, prepares a pod's claim over the kubelet's
 * DRA API v1 and reports health; killed, its claim's unprepare fails visibly, and restarted, the unprepare
 * succeeds.
 */
class KubeletDriverProcessTest {

  private static final String DRIVER = "gpu.kubelet.example.com";
  private static final String NODE = "node-a";

  @TempDir
  Path temp;
  @AutoClose
  private final ExampleProcesses drivers = new ExampleProcesses();

  @Test
  void aKubeletDriverPreparesAndReportsHealthAndAKilledDriversUnprepareWaitsForItsRestart() throws Exception {
    ExampleProcesses.Folders folders = ExampleProcesses.folders(temp);
    Path log = temp.resolve("driver.log");
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = server.newClient();
        ClaimManager manager = ClaimManager.builder(client, NODE).stateDirectory(temp.resolve("state"))
            .retry(Duration.ofMillis(100), Duration.ofMillis(500)).healthRetry(Duration.ofMillis(200)).build();
        Transport transport = new Transport(1);
        RegistrationWatcher watcher = new RegistrationWatcher(folders.registry(), Duration.ofMillis(20),
            new Registrar(transport, Duration.ofSeconds(20)), (driver, socket) -> {
              manager.addDriver(driver);
              return () -> manager.removeDriver(driver);
            })) {
      manager.start();
      watcher.start();
      Process first = startDriver(server, folders, log);

      // like a real driver, it publishes its own slice
      await().atMost(Duration.ofSeconds(30)).until(() -> client.resources(ResourceSlice.class).list().getItems()
          .stream().anyMatch(s -> DRIVER.equals(s.getSpec().getDriver())));

      Pod pod = allocatedPod(client);
      manager.podUpdated(pod);
      await().atMost(Duration.ofSeconds(30)).until(() -> state(manager) == ClaimInfo.State.PREPARED);
      assertThat(manager.containers()).extracting(ContainerDevices::cdiDeviceIds)
          .containsExactly(List.of("k8s." + DRIVER + "/device=dev-0"));
      await().until(() -> health(manager, "dev-0") == DeviceHealth.Health.HEALTHY);
      ExampleProcesses.send(first, "unhealthy dev-0");
      await().until(() -> health(manager, "dev-0") == DeviceHealth.Health.UNHEALTHY);

      first.destroyForcibly().waitFor();
      manager.podRemoved(pod);
      await().atMost(Duration.ofSeconds(30)).until(() -> Optional.ofNullable(info(manager)).map(ClaimInfo::error)
          .orElse("").contains("unpreparing with DRA driver " + DRIVER + " failed"));
      assertThat(info(manager).state()).isEqualTo(ClaimInfo.State.UNPREPARING);

      startDriver(server, folders, log);
      await().atMost(Duration.ofSeconds(30)).until(() -> manager.claims().isEmpty());
      // unprepare is idempotent: a call that outlived its deadline on a busy machine is repeated, as the kubelet does
      List<String> calls = Files.readAllLines(log).stream()
          .filter(l -> l.startsWith("prepared") || l.startsWith("unprepared")).toList();
      assertThat(calls).first().isEqualTo("prepared default/gpu-claim");
      assertThat(calls.subList(1, calls.size())).isNotEmpty().containsOnly("unprepared default/gpu-claim");
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
        .withDriver(DRIVER).withPool(NODE).withDevice("dev-0").withRequest("gpu").endResult().endDevices()
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

  private Process startDriver(EmbeddedApiServer server, ExampleProcesses.Folders folders, Path log)
      throws IOException {
    return drivers.start(ProcessBuilder.Redirect.appendTo(log.toFile()),
        "dev.nodelet.examples.kubeletdriver.KubeletDriver",
        folders.args(DRIVER, "--devices", "2", "--server", server.url(), "--node", NODE));
  }
}
