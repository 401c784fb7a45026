package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.dra.DraDriver;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.SnapshotListener;
import dev.nodelet.dra.Subscription;
import dev.nodelet.dra.runtime.ControllerOptions;
import dev.nodelet.dra.runtime.NodeResources;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.RecordedWrite;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.NodeBuilder;
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
 * The example driver of {@code examples/external-driver} as a child process, registered through real unix sockets
 * and published by the real controller against the embedded API server.
 */
class ExternalDriverProcessTest {

  private static final String DRIVER = "gpu.example.com";

  @TempDir
  Path temp;
  @AutoClose
  private final ExampleProcesses drivers = new ExampleProcesses();

  @Test
  void aKilledDriverIsRetriedWithBackoffAndItsRestartCausesNoSliceChurn() throws Exception {
    ExampleProcesses.Folders folders = ExampleProcesses.folders(temp);
    // a short monitor backoff keeps the test fast; the grace period is the default 30 s
    ControllerOptions options = new ControllerOptions(Duration.ofSeconds(30), Duration.ofMillis(5),
        Duration.ofSeconds(1), 10, 100, Duration.ofMillis(100), Duration.ofMillis(400), 1.0, Duration.ZERO, 128);
    Recorder recorder = new Recorder();
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = server.newClient()) {
      String uid = client.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-a").endMetadata()
          .build()).create().getMetadata().getUid();
      try (NodeResources controller = NodeResources.builder(client, "node-a")
          .nodeUid(() -> Optional.of(uid)).options(options).build();
          Transport transport = new Transport(1);
          RegistrationWatcher watcher = new RegistrationWatcher(folders.registry(), Duration.ofMillis(20),
              new Registrar(transport, Duration.ofSeconds(2)), (driver, socket) -> {
                DraDriver recorded = recorder.wrap(driver);
                controller.addDriver(recorded);
                return () -> controller.removeDriver(recorded);
              })) {
        controller.start();
        watcher.start();

        Process first = startDriver(folders, 3);
        await().until(() -> devices(client) == 3);
        ResourceSlice slice = client.resources(ResourceSlice.class).list().getItems().get(0);
        assertThat(slice.getSpec().getDriver()).isEqualTo(DRIVER);
        assertThat(slice.getSpec().getPool().getName()).isEqualTo("example");
        assertThat(slice.getSpec().getDevices().get(0).getCapacity().get("memory").getValue().getAmount())
            .isEqualTo("16");
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
        assertThat(recorder.retryableFailures.get(0)).contains("ListAndWatchResources of DRA driver " + DRIVER
            + " on " + folders.plugins().resolve(DRIVER).resolve("dra.sock") + " failed: UNAVAILABLE");
        assertThat(recorder.nonRetryableFailures).isEmpty();

        // restarted within the grace period with the same devices: registered again, not a single write
        int snapshotsBefore = recorder.snapshots.get();
        startDriver(folders, 5);
        await().until(() -> recorder.snapshots.get() > snapshotsBefore);
        await().during(Duration.ofMillis(500)).until(() -> sliceWrites(server).isEmpty());
        assertThat(devices(client)).isEqualTo(5);
        assertThat(controller.driverError(DRIVER)).isEmpty();
      }
    }
  }

  private Process startDriver(ExampleProcesses.Folders folders, int devices) throws IOException {
    return drivers.start(ProcessBuilder.Redirect.INHERIT, "dev.nodelet.examples.externaldriver.ExternalDriver",
        folders.args(DRIVER, "--devices", String.valueOf(devices)));
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

    DraDriver wrap(DraDriver driver) {
      return new DraDriver() {
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
}
