package dev.nodelet.store.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.testing.apiserver.Verb;
import dev.nodelet.testing.metrics.Scrape;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The watch store's metrics move as the API server changes, fails and cuts watches. */
class WatchStoreMetricsTest {

  private static final Duration WAIT = Duration.ofSeconds(30);

  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension();
  private final WatchStoreMetrics metrics = new WatchStoreMetrics();

  private String scrape() {
    return Scrape.text(metrics::collect);
  }

  private double value(String series) {
    return Scrape.value(metrics::collect, series);
  }

  private void update(String value) {
    api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName("a")
        .endMetadata().addToData("k", value).build()).serverSideApply();
  }

  @Test
  void syncsFailuresRestartsOpenWatchesAndPropagation() {
    update("1");
    try (WatchStoreStrategy strategy = WatchStoreStrategy.builder(api.client()).metrics(metrics).build()) {
      ObjectStore<ConfigMap> store = strategy.createStore(ResourceType.CONFIG_MAPS);
      // the first sync (a WatchList request) fails
      api.server().failNext(Verb.WATCH, "configmaps", 1, 500);
      store.addReference("ns", "a", "pod-1");
      // the API server sees the watch before the store has counted its sync and its open watch: wait for all three
      await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 1
          && value("nodelet_store_watch_syncs_total{resource=\"configmaps\"}") >= 1
          && value("nodelet_store_watch_open_watches{resource=\"configmaps\"}") >= 1);
      assertThat(value("nodelet_store_watch_sync_failures_total{resource=\"configmaps\"}")).isEqualTo(1);
      assertThat(value("nodelet_store_watch_relists_total{resource=\"configmaps\"}")).isEqualTo(1);
      assertThat(value("nodelet_store_watch_syncs_total{resource=\"configmaps\"}")).isEqualTo(1);
      assertThat(value("nodelet_store_watch_open_watches{resource=\"configmaps\"}")).isEqualTo(1);

      update("2");
      await().atMost(WAIT).until(() -> "2".equals(store.get("ns", "a").getData().get("k")));
      // the delay is observed just after the new copy is served
      await().atMost(WAIT).until(() -> value(
          "nodelet_store_watch_propagation_delay_seconds_count{resource=\"configmaps\"}") >= 1);

      api.server().cutWatches();
      await().atMost(WAIT).until(() -> value("nodelet_store_watch_restarts_total{resource=\"configmaps\"}") >= 1);
      await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 1);
      double before = value("nodelet_store_watch_propagation_delay_seconds_count{resource=\"configmaps\"}");
      update("3");
      await().atMost(WAIT).until(() -> value(
          "nodelet_store_watch_propagation_delay_seconds_count{resource=\"configmaps\"}") > before);

      store.close();
      assertThat(scrape()).doesNotContain("nodelet_store_watch_open_watches{");
    }
  }
}
