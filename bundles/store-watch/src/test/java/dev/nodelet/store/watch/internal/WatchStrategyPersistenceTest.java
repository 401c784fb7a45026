package dev.nodelet.store.watch.internal;

import static dev.nodelet.store.watch.internal.WatchComponentExtension.config;
import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The {@code persistence.*} keys of the watch strategy's configuration. */
class WatchStrategyPersistenceTest {

  @RegisterExtension
  final WatchComponentExtension ds = new WatchComponentExtension();
  private final ApiServerExtension api = ds.api();

  @TempDir
  Path dir;

  private Path key(String mode) throws IOException {
    Path key = dir.resolve("key");
    Files.write(key, new byte[32]);
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString(mode));
    return key;
  }

  @Test
  void aDirectoryWithoutAKeyFileIsRefusedNamingTheKey() {
    assertThat(ds.waits(Map.of("persistence.dir", dir.resolve("store").toString())))
        .contains("persistence.key.file: required");
  }

  @Test
  void aKeyFileOpenToOthersIsRefusedNamingTheFileAndChmod() throws IOException {
    Path key = key("rw-r--r--");
    assertThat(ds.waits(Map.of("persistence.dir", dir.resolve("store").toString(),
        "persistence.key.file", key.toString()))).contains("persistence.key.file: ")
        .contains(key.toString()).contains("chmod 600");
  }

  @Test
  void restoredObjectsObeyTheWatchBudget() throws IOException {
    Map<String, Object> properties = Map.of("persistence.dir", dir.resolve("store").toString(),
        "persistence.key.file", key("rw-------").toString(), "max.watches", 2);
    WatchStrategyComponent first = ds.activate(properties);
    ObjectStore<ConfigMap> store = first.createStore(ResourceType.CONFIG_MAPS);
    for (int i = 0; i < 5; i++) {
      api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata()
          .withName("c" + i).endMetadata().addToData("k", "v").build()).create();
      store.addReference("ns", "c" + i, "pod-1");
      assertThat(store.get("ns", "c" + i).getData()).containsEntry("k", "v");
    }
    first.deactivate();
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
        .until(() -> api.server().openWatches("configmaps") == 0);

    java.util.concurrent.atomic.AtomicInteger most = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.ScheduledExecutorService sampler = java.util.concurrent.Executors
        .newSingleThreadScheduledExecutor();
    sampler.scheduleWithFixedDelay(() -> most.accumulateAndGet(api.server().openWatches("configmaps"), Math::max),
        0, 2, java.util.concurrent.TimeUnit.MILLISECONDS);
    WatchStrategyComponent second = ds.activate(properties);
    try {
      ObjectStore<ConfigMap> restored = second.createStore(ResourceType.CONFIG_MAPS);
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
          .until(() -> api.server().openWatches("configmaps") == 2);
      for (int i = 0; i < 5; i++) {
        assertThat(restored.get("ns", "c" + i).getData()).containsEntry("k", "v");
      }
      assertThat(java.util.stream.IntStream.range(0, 5)
          .filter(i -> restored.state("ns", "c" + i).orElseThrow() == ObjectState.POLLED)).hasSize(3);
      assertThat(most.get()).isLessThanOrEqualTo(2);
    } finally {
      sampler.shutdownNow();
      second.deactivate();
    }
  }

  @Test
  void aRestartedComponentServesWhatTheLastOneStoredWhileTheApiServerIsDown() throws IOException {
    api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName("c")
        .endMetadata().addToData("k", "v").build()).create();
    Map<String, Object> properties = Map.of("persistence.dir", dir.resolve("store").toString(),
        "persistence.key.file", key("rw-------").toString(), "persistence.encrypt.configmaps", true);
    WatchStrategyComponent first = ds.activate(properties);
    ObjectStore<ConfigMap> store = first.createStore(ResourceType.CONFIG_MAPS);
    store.addReference("ns", "c", "pod-1");
    assertThat(store.get("ns", "c").getData()).containsEntry("k", "v");
    // another value that is not about persistence: the new stores share the open directory with the old ones
    first.modified(config(Map.of("persistence.dir", dir.resolve("store").toString(),
        "persistence.key.file", dir.resolve("key").toString(), "persistence.encrypt.configmaps", true,
        "sync.wait.millis", 2000)), Map.of());
    ObjectStore<ConfigMap> next = first.createStore(ResourceType.CONFIG_MAPS);
    next.addReference("ns", "c", "pod-1");
    assertThat(next.get("ns", "c").getData()).containsEntry("k", "v");
    store.close();
    first.deactivate();
    assertThat(Files.list(dir.resolve("store")).map(f -> f.getFileName().toString()))
        .containsExactlyInAnyOrder("configmaps.mv");

    api.server().stop();
    WatchStrategyComponent second = ds.activate(properties);
    try {
      ObjectStore<ConfigMap> restored = second.createStore(ResourceType.CONFIG_MAPS);
      assertThat(restored.get("ns", "c").getData()).containsEntry("k", "v");
      assertThat(restored.state("ns", "c")).contains(ObjectState.FROM_DISK);
    } finally {
      second.deactivate();
    }
  }
}
