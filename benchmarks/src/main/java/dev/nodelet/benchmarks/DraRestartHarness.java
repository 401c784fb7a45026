package dev.nodelet.benchmarks;

import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.DeviceHealthSource;
import dev.nodelet.dra.HealthListener;
import dev.nodelet.dra.Subscription;
import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimManager;
import dev.nodelet.dra.claims.DeviceHealthInfo;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.dra.PreparingDriver;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.concurrent.locks.LockSupport;

/**
 * Measure 15: a DRA driver restarts. 100 pods of one node with one prepared claim each on an in-process driver that
 * reports the health of its devices; the driver's registration goes away (its process ended) and a new registration
 * of the same driver comes (the process started again), as the plugin watcher reports it. Measured from the new
 * registration: until the health of every claim's device is current again (reported by the new registration), and
 * until a pod bound right then has its claim prepared by it.
 */
final class DraRestartHarness {

  static final int MEASURE = 15;
  static final String NODE = "node-a";
  static final String DRIVER = "gpu.example.com";

  record Result(double healthMillis, double newPodMillis) {
  }

  private DraRestartHarness() {
  }

  /** A driver process: prepares claims, and on each health watch reports every device healthy at once. */
  private static final class Registration extends PreparingDriver implements DeviceHealthSource {
    private final int devices;

    Registration(int devices) {
      super(DRIVER);
      this.devices = devices;
    }

    @Override
    public Subscription watchHealth(HealthListener listener) {
      List<DeviceHealth> report = new ArrayList<>();
      Instant now = Instant.now();
      for (int i = 0; i < devices; i++) {
        report.add(new DeviceHealth(NODE, "dev-" + i, DeviceHealth.Health.HEALTHY, now, Duration.ofSeconds(30), ""));
      }
      listener.onHealth(report);
      return () -> { };
    }
  }

  static List<Row> run(boolean smoke) {
    int pods = smoke ? 10 : 100;
    int rounds = smoke ? 1 : 3;
    List<Result> results = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      Result result = once(pods);
      results.add(result);
      Main.log("DRA driver restart round %d: %d claims, health current again after %.1f ms, new pod prepared after"
          + " %.1f ms", r + 1, pods, result.healthMillis, result.newPodMillis);
    }
    return List.of(
        new Row(MEASURE, "DRA driver restart (" + pods + " prepared claims, in-process driver): new registration →"
            + " every claim's device health current again", Stats.medianRange(results, Result::healthMillis, "ms"),
            "—", "≤ 1 s", Stats.median(results, Result::healthMillis) <= 1000 ? "yes" : "**no**"),
        new Row(MEASURE, "DRA driver restart (" + pods + " prepared claims, in-process driver): new registration →"
            + " a pod bound then has its claim prepared", Stats.medianRange(results, Result::newPodMillis, "ms"),
            "—", "≤ 1 s", Stats.median(results, Result::newPodMillis) <= 1000 ? "yes" : "**no**"));
  }

  static Result once(int podCount) {
    Path state;
    try {
      state = Files.createTempDirectory("nodelet-bench-restart-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = server.newClient();
        ClaimManager manager = ClaimManager.builder(client, NODE).stateDirectory(state).build()) {
      Registration first = new Registration(podCount + 1);
      manager.addDriver(first);
      manager.addHealthSource(first);
      manager.start();
      for (int i = 0; i < podCount; i++) {
        manager.podUpdated(allocate(client, i));
      }
      await(() -> prepared(manager, podCount), "the first " + podCount + " claims prepared");
      Pod late = allocate(client, podCount); // allocated while the driver is away, bound once it is back

      manager.removeDriver(first); // the process ended: its registration socket went away
      manager.removeHealthSource(first);
      Registration second = new Registration(podCount + 1);
      Instant registeredAt = Instant.now();
      long start = System.nanoTime();
      manager.addDriver(second);
      manager.addHealthSource(second);
      manager.podUpdated(late);
      long[] healthAt = {0};
      long[] preparedAt = {0};
      await(() -> {
        long now = System.nanoTime();
        if (healthAt[0] == 0 && healthCurrent(manager, podCount, registeredAt)) {
          healthAt[0] = now;
        }
        if (preparedAt[0] == 0 && prepared(manager, podCount + 1)) {
          preparedAt[0] = now;
        }
        return healthAt[0] != 0 && preparedAt[0] != 0;
      }, "health current and the new pod prepared after the restart");
      return new Result(Stats.ms(healthAt[0] - start), Stats.ms(preparedAt[0] - start));
    } finally {
      Fixtures.deleteQuietly(state);
    }
  }

  static Pod allocate(KubernetesClient client, int i) {
    String name = "claim-" + i;
    ResourceClaim claim = client.resources(ResourceClaim.class).inNamespace("default").resource(
        new ResourceClaimBuilder().withNewMetadata().withNamespace("default").withName(name).endMetadata()
            .withNewSpec().withNewDevices().addNewRequest().withName("gpu").withNewExactly().withDeviceClassName("gpu")
            .endExactly().endRequest().endDevices().endSpec().build()).create();
    claim.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addNewResult()
        .withDriver(DRIVER).withPool(NODE).withDevice("dev-" + i).withRequest("gpu").endResult().endDevices()
        .endAllocation().addNewReservedFor().withResource("pods").withName("pod-" + i).withUid("pod-uid-" + i)
        .endReservedFor().build());
    client.resources(ResourceClaim.class).inNamespace("default").resource(claim).updateStatus();
    return new PodBuilder().withNewMetadata().withNamespace("default").withName("pod-" + i).withUid("pod-uid-" + i)
        .withResourceVersion("1").endMetadata().withNewSpec().withNodeName(NODE).addNewResourceClaim().withName("gpu")
        .withResourceClaimName(name).endResourceClaim().endSpec().build();
  }

  static boolean prepared(ClaimManager manager, int count) {
    return manager.claims().stream().filter(c -> c.state() == ClaimInfo.State.PREPARED).count() >= count;
  }

  /** Every claim's device has a healthy report received from the new registration. */
  static boolean healthCurrent(ClaimManager manager, int count, Instant since) {
    return manager.health().stream().filter(h -> DRIVER.equals(h.driver()) && h.health() == DeviceHealth.Health.HEALTHY
        && !h.received().isBefore(since)).map(DeviceHealthInfo::device).distinct().count() >= count;
  }

  static void await(BooleanSupplier done, String what) {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("not within 60 s: " + what);
      }
      LockSupport.parkNanos(100_000);
    }
  }
}
