package dev.nodelet.managers.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;
import static org.awaitility.Awaitility.await;

import dev.nodelet.cache.core.ManagerMetrics;
import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.ObjectReceipt;
import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.persistence.Persistence;
import dev.nodelet.store.ttl.TtlStoreStrategy;
import dev.nodelet.store.watch.WatchStoreStrategy;
import dev.nodelet.testing.metrics.Scrape;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Objects served from disk after a restart without the API server, as the managers show them: in
 * {@code objects()} before any pod registers again, in the receipts of the pods that do, and in the objects-by-state
 * gauge; with the {@code watch} and the {@code ttl} strategy.
 */
class FromDiskTest {

  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines

  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension();

  @TempDir
  Path dir;

  private NodeDisk disk;
  private String storedUid;
  private String storedVersion;

  @BeforeEach
  void start() throws IOException {
    disk = new NodeDisk(dir);
    for (String name : List.of("settings", "other")) {
      api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
          .endMetadata().addToData("mode", "fast").build()).create();
    }
    ConfigMap settings = api.client().configMaps().inNamespace("ns").withName("settings").get();
    storedUid = settings.getMetadata().getUid();
    storedVersion = settings.getMetadata().getResourceVersion();
  }

  /** A first run in which web (u1) references settings and other, and both are read; then the node stops. */
  private void firstRun(String strategyName, Function<Persistence, AutoCloseable> strategies) throws Exception {
    try (Persistence persistence = disk.open(); AutoCloseable strategy = strategies.apply(persistence)) {
      ConfigMapManagerComponent manager = Defaults.configMapManager(api.client(),
          new ManagerMetricsService(new ManagerMetrics(1)), strategyName, (StoreStrategy) strategy);
      try {
        manager.registerPod(Pods.mounting("web", "u1", "settings", "other"));
        manager.get("ns", "settings");
        manager.get("ns", "other");
      } finally {
        manager.deactivate();
      }
    }
  }

  private void restartWithoutTheApiServer(String strategyName, Function<Persistence, AutoCloseable> strategies)
      throws Exception {
    firstRun(strategyName, strategies);
    api.server().stop();
    ManagerMetricsService metrics = new ManagerMetricsService(new ManagerMetrics(1));
    try (Persistence persistence = disk.open(); AutoCloseable strategy = strategies.apply(persistence)) {
      ConfigMapManagerComponent manager = Defaults.configMapManager(api.client(), metrics,
          strategyName, (StoreStrategy) strategy);
      try {
        // no pod has registered yet: the restored objects are listed, with the pods of the previous run
        assertThat(manager.objects()).extracting(CachedObject::name, CachedObject::state, CachedObject::references,
            CachedObject::strategy).containsExactly(
                tuple("other", Optional.of(ObjectState.FROM_DISK), 1, strategyName),
                tuple("settings", Optional.of(ObjectState.FROM_DISK), 1, strategyName));
        assertThat(Scrape.text(metrics::collect)).contains("nodelet_manager_objects{resource=\"configmaps\",state=\"from_disk\","
            + "strategy=\"" + strategyName + "\"} 2.0");

        // web registers again with settings only; app is new and references other
        manager.registerPod(Pods.mounting("web", "u1", "settings"));
        manager.registerPod(Pods.mounting("app", "u2", "other"));
        assertThat(manager.get("ns", "settings").getData()).containsEntry("mode", "fast");
        assertThat(manager.objects()).extracting(CachedObject::name, CachedObject::state, CachedObject::references)
            .containsExactly(
                tuple("other", Optional.of(ObjectState.FROM_DISK), 1),
                tuple("settings", Optional.of(ObjectState.FROM_DISK), 1));
        ObjectReceipt receipt = manager.receipts().get(0).objects().get(0);
        assertThat(receipt.name()).isEqualTo("settings");
        assertThat(receipt.fromDisk()).isTrue();
        assertThat(receipt.state()).contains(ObjectState.FROM_DISK);
        assertThat(receipt.uid()).contains(storedUid);
        assertThat(receipt.resourceVersion()).contains(storedVersion);
        assertThat(receipt.seen()).isEmpty();
        assertThat(receipt.staleReason()).hasValueSatisfying(reason -> assertThat(reason)
            .startsWith("served from the copy a previous run stored on disk, which the API server has not "
                + "confirmed yet"));

        // the API server returns with settings changed: the copy from disk is replaced, the receipt says so
        api.server().start();
        api.client().configMaps().inNamespace("ns").withName("settings").edit(cm -> {
          cm.getData().put("mode", "slow");
          return cm;
        });
        await().atMost(WAIT).untilAsserted(() -> {
          assertThat(manager.get("ns", "settings").getData()).containsEntry("mode", "slow");
          ObjectReceipt fresh = manager.receipts().get(0).objects().get(0);
          assertThat(fresh.fromDisk()).isFalse();
          assertThat(fresh.staleReason()).isEmpty();
          assertThat(fresh.uid()).contains(storedUid);
          assertThat(fresh.resourceVersion()).isNotEqualTo(Optional.of(storedVersion));
        });
        assertThat(manager.objects().get(1).state()).isNotEqualTo(Optional.of(ObjectState.FROM_DISK));
      } finally {
        manager.deactivate();
      }
    }
  }

  @Test
  void watch() throws Exception {
    restartWithoutTheApiServer("watch", persistence -> WatchStoreStrategy.builder(api.client())
        .persistence(persistence).build());
  }

  @Test
  void ttl() throws Exception {
    restartWithoutTheApiServer("ttl", persistence -> TtlStoreStrategy.builder(api.client())
        .defaultTtl(Duration.ofHours(1)).persistence(persistence).build());
  }
}
