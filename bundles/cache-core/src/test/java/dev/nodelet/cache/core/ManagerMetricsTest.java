package dev.nodelet.cache.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The plain-Java entry point to the managers' metrics: {@code ObjectManagers.configMaps(client).metrics(...)}. */
class ManagerMetricsTest {

  private static String scrape(ManagerMetrics metrics) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create().write(out, metrics.collect());
    return out.toString(StandardCharsets.UTF_8);
  }

  private static double value(ManagerMetrics metrics, String series) throws Exception {
    Matcher matcher = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(scrape(metrics));
    return matcher.find() ? Double.parseDouble(matcher.group(1)) : -1;
  }

  private static Pod pod(String configMap) {
    return new PodBuilder().withNewMetadata().withNamespace("ns").withName("web").withUid("u1").endMetadata()
        .withNewSpec().addNewVolume().withName("v").withNewConfigMap().withName(configMap).endConfigMap()
        .endVolume().endSpec().build();
  }

  @Test
  void aManagerBuiltWithMetricsReportsAndTimesItsGetsUntilItCloses() throws Exception {
    ManagerMetrics metrics = new ManagerMetrics(1);
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = server.newClient()) {
      client.configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName("settings")
          .endMetadata().addToData("mode", "fast").build()).create();
      SwitchableObjectManager<ConfigMap> manager = ObjectManagers.configMaps(client).metrics(metrics).build();
      try {
        manager.registerPod(pod("settings"));
        // the built-in get strategy asks the API server for any name
        assertThat(manager.get("ns", "settings").getData()).containsEntry("mode", "fast");
        assertThatThrownBy(() -> manager.get("ns", "other")).isInstanceOf(ObjectNotFoundException.class);

        assertThat(value(metrics, "nodelet_manager_registered_pods{resource=\"configmaps\"}")).isEqualTo(1);
        assertThat(value(metrics, "nodelet_manager_get_duration_seconds_count{resource=\"configmaps\"}"))
            .isEqualTo(2);
        assertThat(value(metrics,
            "nodelet_manager_get_errors_total{reason=\"not_found\",resource=\"configmaps\"}")).isEqualTo(1);
        assertThat(value(metrics, "nodelet_manager_watchers{resource=\"configmaps\"}")).isZero();
      } finally {
        manager.close();
      }
      assertThat(scrape(metrics)).doesNotContain("resource=\"configmaps\"");
    }
  }

  @Test
  void samplingMustBeAPowerOfTwo() {
    assertThatThrownBy(() -> new ManagerMetrics(3)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("power of two, was 3");
  }
}
