package dev.nodelet.managers.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.cache.core.ManagerMetrics;
import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchOptions;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.store.watch.WatchStoreStrategy;
import dev.nodelet.testing.metrics.Scrape;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ManagerMetricsTest {

  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension();
  private final ManagerMetricsService metrics = new ManagerMetricsService(new ManagerMetrics(1));
  private WatchStoreStrategy watch;
  private ConfigMapManagerComponent configMaps;
  private SecretManagerComponent secrets;

  @BeforeEach
  void start() {
    watch = WatchStoreStrategy.builder(api.client()).build();
    api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName("settings")
        .endMetadata().addToData("mode", "fast").build()).create();
    api.client().secrets().inNamespace("ns").resource(new SecretBuilder().withNewMetadata().withName("db-password")
        .endMetadata().addToStringData("password", "hunter2").build()).create();
    ManagerConfiguration config = Defaults.configuration();
    configMaps = new ConfigMapManagerComponent(api.client(), metrics, config);
    secrets = new SecretManagerComponent(api.client(), metrics, config);
    configMaps.addStrategy(watch, Defaults.strategy("watch", 1));
    secrets.addStrategy(watch, Defaults.strategy("watch", 1));
  }

  @AfterEach
  void stop() {
    if (configMaps != null) {
      configMaps.deactivate();
    }
    secrets.deactivate();
    watch.close();
  }

  private String scrape() {
    return Scrape.text(metrics::collect);
  }

  private double value(String series) {
    return Scrape.value(metrics::collect, series);
  }

  private static Pod pod() {
    return new PodBuilder().withNewMetadata().withNamespace("ns").withName("web").withUid("u1").endMetadata()
        .withNewSpec().addNewContainer().withName("c").addNewEnvFrom().withNewConfigMapRef().withName("settings")
        .endConfigMapRef().endEnvFrom().addNewEnvFrom().withNewSecretRef().withName("db-password").endSecretRef()
        .endEnvFrom().endContainer().endSpec().build();
  }

  @Test
  void theDefaultTimesOneGetInSixtyFour() throws Exception {
    ManagerMetricsService sampled = new ManagerMetricsService();
    ManagerConfiguration config = Defaults.configuration();
    ConfigMapManagerComponent component = new ConfigMapManagerComponent(api.client(), sampled, config);
    try {
      component.addStrategy(watch, Defaults.strategy("watch", 1));
      component.registerPod(pod());
      component.get("ns", "settings");
      for (int i = 0; i < 64_000; i++) {
        component.get("ns", "settings");
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      PrometheusTextFormatWriter.create().write(out, sampled.collect());
      Matcher count = Pattern.compile(
          "(?m)^nodelet_manager_get_duration_seconds_count\\{resource=\"configmaps\"} (\\S+)$")
          .matcher(out.toString(StandardCharsets.UTF_8));
      assertThat(count.find()).isTrue();
      // 1000 expected; far outside this, the sampling is broken
      assertThat(Double.parseDouble(count.group(1))).isBetween(700.0, 1300.0);
    } finally {
      component.deactivate();
    }
  }

  @Test
  void reportsPodsObjectsGetsAndErrorsPerManager() throws Exception {
    assertThat(value("nodelet_manager_registered_pods{resource=\"configmaps\"}")).isZero();
    configMaps.registerPod(pod());
    secrets.registerPod(pod());
    assertThat(value("nodelet_manager_registered_pods{resource=\"configmaps\"}")).isEqualTo(1);
    assertThat(value("nodelet_manager_registered_pods{resource=\"secrets\"}")).isEqualTo(1);

    assertThat(configMaps.get("ns", "settings").getData()).containsEntry("mode", "fast");
    assertThat(secrets.get("ns", "db-password")).isNotNull();
    assertThat(value("nodelet_manager_objects{resource=\"configmaps\",state=\"running\",strategy=\"watch\"}"))
        .isEqualTo(1);
    assertThat(value("nodelet_manager_get_duration_seconds_count{resource=\"configmaps\"}")).isEqualTo(1);

    assertThatThrownBy(() -> configMaps.get("ns", "other")).isInstanceOf(NotRegisteredException.class);
    api.client().configMaps().inNamespace("ns").withName("settings").delete();
    org.awaitility.Awaitility.await().untilAsserted(() -> assertThatThrownBy(() -> configMaps.get("ns", "settings"))
        .isInstanceOf(ObjectNotFoundException.class));
    assertThat(value("nodelet_manager_get_errors_total{reason=\"not_registered\",resource=\"configmaps\"}"))
        .isEqualTo(1);
    assertThat(value("nodelet_manager_get_errors_total{reason=\"not_found\",resource=\"configmaps\"}"))
        .isGreaterThanOrEqualTo(1);
    assertThat(value("nodelet_manager_get_duration_seconds_count{resource=\"configmaps\"}")).isGreaterThanOrEqualTo(3);
    assertThat(value("nodelet_manager_watchers{resource=\"secrets\"}")).isZero();

    // a watch on the fan-out holds the events no consumer took
    try (Watch<Secret> watch = secrets.watch(WatchOptions.<Secret>builder().sendInitialEvents(true).build())) {
      assertThat(value("nodelet_manager_watchers{resource=\"secrets\"}")).isEqualTo(1);
      assertThat(value("nodelet_manager_watch_queued_events{resource=\"secrets\"}")).isEqualTo(1);
      assertThat(value("nodelet_manager_watch_queued_events_max{resource=\"secrets\"}")).isEqualTo(1);
      assertThat(watch.poll(Duration.ZERO)).isNotNull();
      assertThat(value("nodelet_manager_watch_queued_events{resource=\"secrets\"}")).isZero();
    }
    assertThat(value("nodelet_manager_watchers{resource=\"secrets\"}")).isZero();

    // the Secret's name, key and value never appear
    assertThat(scrape()).doesNotContain("db-password").doesNotContain("hunter2").doesNotContain("\"ns\"");

    // a manager that goes takes its series with it; the other stays
    configMaps.deactivate();
    configMaps = null;
    assertThat(scrape()).doesNotContain("resource=\"configmaps\"").contains("resource=\"secrets\"");
  }
}
