package dev.nodelet.benchmarks;

import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimManager;
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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * Measure 7: DRA claim preparation. 100 pods of one node with one claim each, on one in-process driver: the claims
 * are allocated and reserved (status written to the API server, as the scheduler does) and the pods bound (handed to
 * the claim manager, as the pod source does) all at once; the time from each claim's allocation until the manager
 * shows it prepared (the driver called and the checkpoint written), p50 and p99.
 */
final class DraClaimsHarness {

  private static final String NODE = "node-a";
  private static final String DRIVER = "gpu.example.com";

  record Result(double p50Millis, double p99Millis, double allMillis) {
  }

  private DraClaimsHarness() {
  }

  static List<Row> run(boolean smoke) {
    int pods = smoke ? 10 : 100;
    int rounds = smoke ? 1 : 3;
    List<Result> results = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      Result result = once(pods);
      results.add(result);
      Main.log("DRA claims round %d: %d pods, allocation to prepared p50 %.2f ms, p99 %.2f ms, all in %.1f ms",
          r + 1, pods, result.p50Millis, result.p99Millis, result.allMillis);
    }
    List<Row> rows = new ArrayList<>();
    rows.add(new Row(7, "DRA claims: " + pods + " pods × 1 claim, allocation to prepared, p50",
        Stats.medianRange(results, Result::p50Millis, "ms"), "—", "—", "—"));
    rows.add(new Row(7, "DRA claims: " + pods + " pods × 1 claim, allocation to prepared, p99",
        Stats.medianRange(results, Result::p99Millis, "ms") + "; all prepared in "
            + Stats.medianRange(results, Result::allMillis, "ms"), "—", "p99 ≤ 50 ms, checkpoint written durably",
        Stats.median(results, Result::p99Millis) <= 50 ? "yes" : "**no**"));
    return rows;
  }

  static Result once(int podCount) {
    Path state;
    try {
      state = Files.createTempDirectory("nodelet-bench-claims-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = server.newClient();
        ClaimManager manager = ClaimManager.builder(client, NODE).stateDirectory(state).build()) {
      manager.addDriver(new PreparingDriver(DRIVER));
      manager.start();
      List<Pod> pods = new ArrayList<>();
      List<ResourceClaim> claims = new ArrayList<>();
      for (int i = 0; i < podCount; i++) {
        String name = "claim-" + i;
        pods.add(new PodBuilder().withNewMetadata().withNamespace("default").withName("pod-" + i)
            .withUid("pod-uid-" + i).withResourceVersion("1").endMetadata().withNewSpec().withNodeName(NODE)
            .addNewResourceClaim().withName("gpu").withResourceClaimName(name).endResourceClaim().endSpec().build());
        claims.add(client.resources(ResourceClaim.class).inNamespace("default").resource(new ResourceClaimBuilder()
            .withNewMetadata().withNamespace("default").withName(name).endMetadata().withNewSpec().withNewDevices()
            .addNewRequest().withName("gpu").withNewExactly().withDeviceClassName("gpu").endExactly().endRequest()
            .endDevices().endSpec().build()).create());
      }
      Map<String, Long> allocatedAt = new ConcurrentHashMap<>();
      // the manager is watched from before the first allocation, on a thread of its own, so that each claim's time
      // is taken when it shows prepared, not once every allocation was written
      CompletableFuture<Map<String, Long>> watched = CompletableFuture.supplyAsync(
          () -> awaitPrepared(manager, podCount), runnable -> {
            Thread t = new Thread(runnable, "bench-claims-poller");
            t.setDaemon(true);
            t.start();
          });
      long start = System.nanoTime();
      for (int i = 0; i < podCount; i++) {
        ResourceClaim claim = claims.get(i);
        claim.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addNewResult()
            .withDriver(DRIVER).withPool(NODE).withDevice("dev-" + i).withRequest("gpu").endResult().endDevices()
            .endAllocation().addNewReservedFor().withResource("pods").withName("pod-" + i)
            .withUid("pod-uid-" + i).endReservedFor().build());
        client.resources(ResourceClaim.class).inNamespace("default").resource(claim).updateStatus();
        allocatedAt.put(claim.getMetadata().getName(), System.nanoTime());
        manager.podUpdated(pods.get(i)); // the pod is bound once its claims are allocated
      }
      Map<String, Long> preparedAt = watched.join();
      double[] latencies = preparedAt.entrySet().stream()
          .mapToDouble(e -> Stats.ms(e.getValue() - allocatedAt.get(e.getKey()))).sorted().toArray();
      long last = preparedAt.values().stream().mapToLong(Long::longValue).max().orElse(start);
      return new Result(percentile(latencies, 50), percentile(latencies, 99), Stats.ms(last - start));
    } finally {
      Fixtures.deleteQuietly(state);
    }
  }

  /** Polls the manager every 0.1 ms until every claim shows prepared; the time each was first seen so. */
  private static Map<String, Long> awaitPrepared(ClaimManager manager, int podCount) {
    Map<String, Long> preparedAt = new HashMap<>();
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (preparedAt.size() < podCount) {
      long now = System.nanoTime();
      for (ClaimInfo c : manager.claims()) {
        if (c.state() == ClaimInfo.State.PREPARED) {
          preparedAt.putIfAbsent(c.name(), now);
        }
      }
      if (now > deadline) {
        throw new IllegalStateException("only " + preparedAt.size() + " of " + podCount + " claims prepared");
      }
      LockSupport.parkNanos(100_000);
    }
    return preparedAt;
  }

  private static double percentile(double[] sorted, int p) {
    int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
  }
}
