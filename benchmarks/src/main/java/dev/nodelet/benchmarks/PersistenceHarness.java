package dev.nodelet.benchmarks;

import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.persistence.Persistence;
import dev.nodelet.persistence.PersistenceOptions;
import dev.nodelet.store.watch.WatchStoreStrategy;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.List;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;

/**
 * Measure 8, persistence of the watch strategy (ConfigMaps encrypted, as Secrets always are). Start-up: a first run
 * watches {@code count} ConfigMaps with persistence and closes; the API server (child JVM) is stopped; the time from
 * opening the persistence directory to every object served by get. Overhead: measure 4 (update → visible to get)
 * with and without persistence, one after the other against the same server.
 */
final class PersistenceHarness {

  private PersistenceHarness() {
  }

  static List<Row> run(boolean smoke) {
    int stored = smoke ? 100 : 5000;
    int watched = smoke ? 50 : 1000;
    int seconds = smoke ? 1 : 15;
    Path dir = tempDir();
    try {
      Path key = keyFile(dir);
      PersistenceOptions options = PersistenceOptions.of(dir.resolve("store"), "bench-node", key)
          .withEncryptConfigMaps(true);
      String url;
      try (ApiServerProcess server = ApiServerProcess.start();
          KubernetesClient admin = Watched.client(server);
          Persistence persistence = Persistence.open(options)) {
        Fixtures.createConfigMaps(admin, 0, stored);
        Watched.nodelet(server, persistence).watch(stored).close();
        url = server.url();
      }
      long millis = startOffline(url, options, stored);
      Main.log("persistence: %d stored objects served without the API server %d ms after opening", stored, millis);

      Histogram plain;
      Histogram persisted;
      try (ApiServerProcess server = ApiServerProcess.start();
          KubernetesClient admin = Watched.client(server)) {
        Fixtures.createConfigMaps(admin, 0, watched);
        plain = UpdateVisibilityHarness.measure(server, admin, watched, seconds, Watched::nodelet);
        // a directory of its own: the first part's objects would be restored and resumed against another server
        PersistenceOptions fresh = new PersistenceOptions(dir.resolve("store-update"), options.nodeName(),
            options.keyFile(), true, 0, PersistenceOptions.DEFAULT_COMMIT_DELAY);
        try (Persistence persistence = Persistence.open(fresh)) {
          persisted = UpdateVisibilityHarness.measure(server, admin, watched, seconds,
              s -> Watched.nodelet(s, persistence));
        }
      }
      double p99Plain = Stats.ms(plain.getValueAtPercentile(99));
      double p99Persisted = Stats.ms(persisted.getValueAtPercentile(99));
      double overhead = (p99Persisted / p99Plain - 1) * 100;
      Main.log("persistence: update→get p99 %.2f ms with, %.2f ms without (%+.1f %%)", p99Persisted, p99Plain,
          overhead);
      return List.of(
          new Row(8, "start with " + stored + " stored objects (ConfigMaps, encrypted) and no API server → all "
              + "served by get", millis + " ms", "—", "≤ 2000 ms", Row.verdict(millis <= 2000)),
          new Row(8, "update → visible to get with persistence on (measure 4, " + watched + " objects, "
              + UpdateVisibilityHarness.RATE + " updates/s for " + seconds + " s)", "p99 " + Stats.fmt(p99Persisted)
              + " ms (p50 " + Stats.fmt(Stats.ms(persisted.getValueAtPercentile(50))) + " ms)", "p99 "
              + Stats.fmt(p99Plain) + " ms (p50 " + Stats.fmt(Stats.ms(plain.getValueAtPercentile(50)))
              + " ms) without persistence; overhead " + String.format(java.util.Locale.ROOT, "%+.1f %%", overhead),
              "overhead ≤ 10 % of p99", Row.verdict(overhead <= 10)));
    } finally {
      delete(dir);
    }
  }

  /** A restart with the API server gone: open, build, and get every object; returns the milliseconds it took. */
  private static long startOffline(String deadUrl, PersistenceOptions options, int count) {
    long start = System.nanoTime();
    try (KubernetesClient client = Watched.nodeletClient(deadUrl);
        Persistence persistence = Persistence.open(options);
        WatchStoreStrategy strategy = WatchStoreStrategy.builder(client).persistence(persistence).build()) {
      ObjectStore<ConfigMap> store = strategy.createStore(ResourceType.CONFIG_MAPS);
      for (int i = 0; i < count; i++) {
        String name = Fixtures.name(i);
        ConfigMap object = store.get(Fixtures.NAMESPACE, name);
        if (!object.getMetadata().getName().equals(name)
            || store.state(Fixtures.NAMESPACE, name).orElseThrow() != ObjectState.FROM_DISK) {
          throw new IllegalStateException("not served from disk: " + name);
        }
      }
      return (System.nanoTime() - start) / 1_000_000;
    }
  }

  private static Path tempDir() {
    try {
      return Files.createTempDirectory("nodelet-persistence-bench");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path keyFile(Path dir) {
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    Path file = dir.resolve("key");
    try {
      Files.write(file, key);
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return file;
  }

  private static void delete(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException e) {
      // a temporary directory
    }
  }
}
