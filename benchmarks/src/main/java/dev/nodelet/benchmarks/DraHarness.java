package dev.nodelet.benchmarks;

import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.SnapshotListener;
import dev.nodelet.dra.Subscription;
import dev.nodelet.dra.runtime.NodeResources;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.RecordedWrite;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;

/**
 * Measure 6: the DRA node controller with 50 drivers of 128 devices each (one pool per driver): the time from
 * {@code start()} and the drivers' registration until every slice is created; then a restart of the controller with
 * the same drivers and devices, and the writes it makes (the target is none).
 */
final class DraHarness {

  private static final String NODE = "node-a";
  private static final String BARRIER = "barrier.example.com";

  record Result(double publishSeconds, int slices, int devices, long restartWrites, double restartSettleSeconds) {
  }

  private DraHarness() {
  }

  static List<Row> run(boolean smoke) {
    int drivers = smoke ? 5 : 50;
    int rounds = smoke ? 1 : 3;
    List<Result> results = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      Result result = once(drivers, 128);
      results.add(result);
      Main.log("DRA round %d: %d slices, %d devices published in %.3f s; %d writes after the restart (settled in "
          + "%.3f s)", r + 1, result.slices, result.devices, result.publishSeconds, result.restartWrites,
          result.restartSettleSeconds);
    }
    double publish = Stats.median(results, Result::publishSeconds);
    long maxWrites = results.stream().mapToLong(Result::restartWrites).max().orElse(0);
    boolean allPublished = results.stream().allMatch(r -> r.devices == drivers * 128);
    List<Row> rows = new ArrayList<>();
    rows.add(new Row(6, "DRA: " + drivers + " drivers × 128 devices, time to publish all slices",
        Stats.medianRange(results, Result::publishSeconds, "s") + " (" + results.get(0).slices + " slices, "
            + results.get(0).devices + " devices)",
        "—", "≤ 5 s", Row.verdict(publish <= 5 && allPublished)));
    rows.add(new Row(6, "DRA: writes after a controller restart with nothing changed",
        maxWrites + " writes (max of " + results.size() + " runs); restart settled in "
            + Stats.medianRange(results, Result::restartSettleSeconds, "s"),
        "—", "0 writes", Row.verdict(maxWrites == 0)));
    return rows;
  }

  static Result once(int driverCount, int devices) {
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient admin = server.newClient();
        KubernetesClient client = server.newClient()) {
      String nodeUid = admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata()
          .build()).create().getMetadata().getUid();
      List<String> names = IntStream.range(0, driverCount).mapToObj(i -> "gpu-" + i + ".example.com").toList();
      server.clearWrites();

      NodeResources first = NodeResources.builder(client, NODE)
          .nodeUid(() -> Optional.of(nodeUid)).build();
      long t0 = System.nanoTime();
      first.start();
      for (String name : names) {
        first.addDriver(new SnapshotDriver(name, List.of(pool("pool-0", devices))));
      }
      int slicesPerDriver = (devices + 127) / 128;
      await(() -> created(server) >= (long) driverCount * slicesPerDriver, "all slices created");
      double publishSeconds = (System.nanoTime() - t0) / 1e9;
      List<ResourceSlice> slices = admin.resources(ResourceSlice.class).list().getItems();
      int deviceCount = slices.stream().mapToInt(s -> s.getSpec().getDevices().size()).sum();

      first.close();
      server.clearWrites();
      long t2 = System.nanoTime();
      NodeResources second = NodeResources.builder(client, NODE)
          .nodeUid(() -> Optional.of(nodeUid)).build();
      try {
        second.start();
        for (String name : names) {
          second.addDriver(new SnapshotDriver(name, List.of(pool("pool-0", devices))));
        }
        // one worker, first in first out: once the barrier driver, added last, has been written twice, every
        // driver before it has been synced
        SnapshotDriver barrier = new SnapshotDriver(BARRIER, List.of(pool("barrier-0", 1)));
        second.addDriver(barrier);
        await(() -> barrierWrites(server) >= 1, "the barrier written");
        barrier.publish(List.of(pool("barrier-0", 2))); // one update of its one slice
        await(() -> barrierWrites(server) >= 2, "the barrier written again");
        double settle = (System.nanoTime() - t2) / 1e9;
        long writes = server.writes().stream().filter(w -> !isBarrier(w)).count();
        return new Result(publishSeconds, slices.size(), deviceCount, writes, settle);
      } finally {
        second.close();
      }
    }
  }

  private static long created(EmbeddedApiServer server) {
    return server.writes().stream()
        .filter(w -> "resourceslices".equals(w.resource()) && w.succeeded() && !isBarrier(w)).count();
  }

  private static long barrierWrites(EmbeddedApiServer server) {
    return server.writes().stream().filter(w -> isBarrier(w) && w.succeeded()).count();
  }

  private static boolean isBarrier(RecordedWrite write) {
    return write.name() != null && write.name().startsWith(NODE + "-" + BARRIER + "-");
  }

  private static void await(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("timed out waiting for " + what);
      }
      LockSupport.parkNanos(1_000_000);
    }
  }

  static Pool pool(String name, int devices) {
    return new Pool(name, IntStream.range(0, devices).mapToObj(i -> device(String.format("dev-%03d", i))).toList());
  }

  private static Device device(String name) {
    return new DeviceBuilder().withName(name)
        .addToAttributes("model", new DeviceAttribute(null, null, "a100", null))
        .build();
  }

  /** A driver that sends a snapshot when subscribed to, and more when told. */
  static final class SnapshotDriver implements DeviceSnapshots {
    private final String name;
    private final List<Pool> first;
    private volatile SnapshotListener listener;

    SnapshotDriver(String name, List<Pool> first) {
      this.name = name;
      this.first = first;
    }

    @Override
    public String driverName() {
      return name;
    }

    @Override
    public Subscription subscribe(SnapshotListener l) {
      listener = l;
      l.onSnapshot(first);
      return () -> { };
    }

    void publish(List<Pool> pools) {
      listener.onSnapshot(pools);
    }
  }
}
