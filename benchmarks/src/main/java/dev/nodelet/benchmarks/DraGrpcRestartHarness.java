package dev.nodelet.benchmarks;

import static dev.nodelet.benchmarks.DraRestartHarness.DRIVER;
import static dev.nodelet.benchmarks.DraRestartHarness.NODE;
import static dev.nodelet.benchmarks.DraRestartHarness.allocate;
import static dev.nodelet.benchmarks.DraRestartHarness.await;
import static dev.nodelet.benchmarks.DraRestartHarness.healthCurrent;
import static dev.nodelet.benchmarks.DraRestartHarness.prepared;

import dev.nodelet.dra.claims.ClaimManager;
import dev.nodelet.dra.grpc.PluginWatcher;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Measure 15 over real gRPC: the driver is a kubelet plugin served on unix sockets (registration socket in the
 * registration folder, the kubelet's DRA API v1 and health API v1 on its endpoint), registered through
 * {@link PluginWatcher} as the {@code nodelet-dra-grpc} bundle does, and its roles handed to the claim manager as the
 * {@code nodelet-dra-claims} bundle does. 100 pods with one prepared claim each; the plugin is killed (its socket
 * files stay behind) and a new one binds new sockets under the same names. Measured from the moment the new
 * registration socket is in place: until every claim's device health is current again (reported on the new
 * registration's stream), and until a pod bound then has its claim prepared by the new registration. The folder is
 * polled at the bundle's default interval (1 s) in a full run, so part of each figure is the wait for the next poll.
 */
final class DraGrpcRestartHarness {

  /** The bundle's default poll interval of the registration folder. */
  private static final Duration POLL = Duration.ofMillis(500);
  /** In the smoke run, so that it stays short: it measures nothing. */
  private static final Duration SMOKE_POLL = Duration.ofMillis(50);

  record Result(double seenMillis, double healthMillis, double newPodMillis) {
  }

  private DraGrpcRestartHarness() {
  }

  static List<Row> run(boolean smoke) {
    int pods = smoke ? 10 : 100;
    int rounds = smoke ? 1 : 3;
    Duration poll = smoke ? SMOKE_POLL : POLL;
    List<Result> results = new ArrayList<>();
    long started = System.nanoTime();
    for (int r = 0; r < rounds; r++) {
      Result result = once(pods, poll);
      results.add(result);
      Main.log("DRA driver restart over gRPC round %d: %d claims, registered again after %.1f ms, health current"
          + " again after %.1f ms, new pod prepared after %.1f ms", r + 1, pods, result.seenMillis,
          result.healthMillis, result.newPodMillis);
    }
    // what this part adds to the run (and to the smoke test)
    Main.log("DRA driver restart over gRPC took %.1f s", (System.nanoTime() - started) / 1e9);
    String what = "DRA driver restart over gRPC (" + pods + " prepared claims, kubelet plugin killed and started"
        + " again on unix sockets, folder polled every " + poll.toMillis() + " ms): new registration socket → ";
    String seen = "; the watcher's handshake done after " + Stats.medianRange(results, Result::seenMillis, "ms");
    return List.of(
        new Row(DraRestartHarness.MEASURE, what + "every claim's device health current again",
            Stats.medianRange(results, Result::healthMillis, "ms") + seen, "—", "≤ 1 s",
            Row.verdict(Stats.median(results, Result::healthMillis) <= 1000)),
        new Row(DraRestartHarness.MEASURE, what + "a pod bound then has its claim prepared",
            Stats.medianRange(results, Result::newPodMillis, "ms"), "—", "≤ 1 s",
            Row.verdict(Stats.median(results, Result::newPodMillis) <= 1000)));
  }

  static Result once(int podCount, Duration poll) {
    Path temp;
    Path registry;
    Path plugins;
    try {
      temp = Files.createTempDirectory("nodelet-bench-grpc-restart-");
      registry = Files.createDirectory(temp.resolve("plugins_registry"),
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      plugins = Files.createDirectory(temp.resolve("plugins"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<KubeletPluginServer> servers = new ArrayList<>();
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = server.newClient();
        ClaimManager manager = ClaimManager.builder(client, NODE).stateDirectory(temp).build();
        PluginWatcher watcher = PluginWatcher.builder(registry).pollInterval(poll).build()) {
      // what the dra-claims bundle does with the services the dra-grpc bundle registers
      watcher.start(plugin -> {
        plugin.claimPreparation().ifPresent(manager::addDriver);
        plugin.healthSource().ifPresent(manager::addHealthSource);
        return () -> {
          plugin.claimPreparation().ifPresent(manager::removeDriver);
          plugin.healthSource().ifPresent(manager::removeHealthSource);
        };
      });
      manager.start();
      KubeletPluginServer first = new KubeletPluginServer(DRIVER, NODE, podCount + 1, client, registry, plugins);
      servers.add(first);
      watcher.nextScan().join(); // registered: the pods below are prepared at once, not after a retry
      for (int i = 0; i < podCount; i++) {
        manager.podUpdated(allocate(client, i));
      }
      await(() -> prepared(manager, podCount), "the first " + podCount + " claims prepared");
      Pod late = allocate(client, podCount); // allocated while the driver is away, bound once it is back

      first.kill(); // the process died: its socket files stay until the new one replaces them
      Instant placedAt = Instant.now();
      long start = System.nanoTime();
      KubeletPluginServer second = new KubeletPluginServer(DRIVER, NODE, podCount + 1, client, registry, plugins);
      servers.add(second);
      manager.podUpdated(late);
      long[] healthAt = {0};
      long[] preparedAt = {0};
      await(() -> {
        long now = System.nanoTime();
        if (healthAt[0] == 0 && healthCurrent(manager, podCount, placedAt)) {
          healthAt[0] = now;
        }
        if (preparedAt[0] == 0 && prepared(manager, podCount + 1)) {
          preparedAt[0] = now;
        }
        return healthAt[0] != 0 && preparedAt[0] != 0 && second.registeredAtNanos() != 0;
      }, "health current and the new pod prepared after the restart");
      return new Result(Stats.ms(second.registeredAtNanos() - start), Stats.ms(healthAt[0] - start),
          Stats.ms(preparedAt[0] - start));
    } finally {
      servers.forEach(KubeletPluginServer::close); // the killed one again: nothing left to stop
      Fixtures.deleteQuietly(temp);
    }
  }
}
