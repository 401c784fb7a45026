package dev.nodelet.store.ttl;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.objectcache.testing.MutableClock;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The TTL store counts its fetches as the API server answers or fails them. */
class TtlStoreMetricsTest {

  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension();
  private final MutableClock clock = new MutableClock();
  private final TtlStoreMetrics metrics = new TtlStoreMetrics();

  private double value(String series) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create().write(out, metrics.collect());
    Matcher matcher = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$")
        .matcher(out.toString(StandardCharsets.UTF_8));
    return matcher.find() ? Double.parseDouble(matcher.group(1)) : 0;
  }

  @Test
  void syncsFailuresAndStaleCopiesServed() throws Exception {
    api.createConfigMap("ns", "a", Map.of("k", "1"));
    try (TtlStoreStrategy strategy = TtlStoreStrategy.builder(api.client()).clock(clock)
        .defaultTtl(Duration.ofSeconds(10)).metrics(metrics).build()) {
      ObjectStore<ConfigMap> store = strategy.createStore(ResourceType.CONFIG_MAPS);
      store.addReference("ns", "a", "pod-1");
      store.get("ns", "a");
      store.get("ns", "a"); // fresh: no fetch
      assertThat(value("nodelet_store_ttl_syncs_total{resource=\"configmaps\"}")).isEqualTo(1);

      clock.advance(Duration.ofSeconds(11));
      api.server().failNext(Verb.GET, "configmaps", 1, 500);
      assertThat(store.get("ns", "a").getData()).containsEntry("k", "1");
      assertThat(value("nodelet_store_ttl_sync_failures_total{resource=\"configmaps\"}")).isEqualTo(1);
      assertThat(value("nodelet_store_ttl_stale_served_total{resource=\"configmaps\"}")).isEqualTo(1);

      store.get("ns", "a");
      assertThat(value("nodelet_store_ttl_syncs_total{resource=\"configmaps\"}")).isEqualTo(2);
    }
  }
}
