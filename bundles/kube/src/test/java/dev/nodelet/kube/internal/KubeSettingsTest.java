package dev.nodelet.kube.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.util.converter.Converters;

class KubeSettingsTest {

  private static final UnaryOperator<String> NO_ENV = name -> null;

  @TempDir
  Path dir;

  private static KubeConfiguration config(Map<String, ?> properties) {
    return Converters.standardConverter().convert(properties).to(KubeConfiguration.class);
  }

  private static KubeSettings settings(Map<String, ?> properties) {
    return KubeSettings.from(config(properties), NO_ENV, () -> "unused-host");
  }

  private static void assertInvalid(Map<String, ?> properties, String key) {
    assertThatThrownBy(() -> settings(properties))
        .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.key()).isEqualTo(key))
        .hasMessageStartingWith(key + ": ");
  }

  @Test
  void emptyConfigurationUsesAutomaticConfigurationAndDefaults() {
    KubeSettings settings = settings(Map.of());

    assertThat(settings.masterUrl()).isEmpty();
    assertThat(settings.kubeconfig()).isEmpty();
    assertThat(settings.context()).isEmpty();
    assertThat(settings.requestTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(settings.connectionTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(settings.source()).isEqualTo("automatic configuration");
    assertThat(settings.http2()).isTrue();
  }

  @Test
  void configuredValuesAreTaken() throws Exception {
    Path kubeconfig = Files.writeString(dir.resolve("config"), "apiVersion: v1\nkind: Config\n");
    KubeSettings settings = settings(Map.of(
        "master.url", "https://10.0.0.1:6443",
        "kubeconfig.path", kubeconfig.toString(),
        "context", "prod",
        "node.name", "worker-1.example",
        "request.timeout", "2500",
        "connection.timeout", 700,
        "http2.enabled", "false"));

    assertThat(settings.masterUrl()).contains("https://10.0.0.1:6443");
    assertThat(settings.kubeconfig()).contains(kubeconfig);
    assertThat(settings.context()).contains("prod");
    assertThat(settings.nodeName()).isEqualTo("worker-1.example");
    assertThat(settings.requestTimeout()).isEqualTo(Duration.ofMillis(2500));
    assertThat(settings.connectionTimeout()).isEqualTo(Duration.ofMillis(700));
    assertThat(settings.http2()).isFalse();
  }

  @Test
  void nodeNameFallsBackToEnvironmentThenLowerCasedHostName() {
    Map<String, String> env = new HashMap<>();
    env.put("NODE_NAME", "from-env");
    KubeConfiguration empty = config(Map.of());

    assertThat(KubeSettings.from(empty, env::get, () -> "Host-A").nodeName()).isEqualTo("from-env");
    assertThat(KubeSettings.from(empty, NO_ENV, () -> "Host-A").nodeName()).isEqualTo("host-a");
    assertThat(KubeSettings.from(config(Map.of("node.name", "configured")), env::get, () -> "Host-A").nodeName())
        .isEqualTo("configured");
  }

  @Test
  void unknownHostNameWithoutNodeNameIsInvalid() {
    assertThatThrownBy(() -> KubeSettings.from(config(Map.of()), NO_ENV, () -> null))
        .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.key()).isEqualTo("node.name"));
  }

  @Test
  void invalidNodeNamesAreRejected() {
    assertInvalid(Map.of("node.name", "Upper"), "node.name");
    assertInvalid(Map.of("node.name", "under_score"), "node.name");
    assertInvalid(Map.of("node.name", "-leading"), "node.name");
    assertInvalid(Map.of("node.name", "a".repeat(254)), "node.name");
  }

  @Test
  void malformedMasterUrlsAreRejected() {
    assertInvalid(Map.of("master.url", "not a url"), "master.url");
    assertInvalid(Map.of("master.url", "ftp://host"), "master.url");
    assertInvalid(Map.of("master.url", "http://"), "master.url");
    assertInvalid(Map.of("master.url", "/relative/path"), "master.url");
  }

  @Test
  void masterUrlWithUserInformationIsRejectedWithoutEchoingIt() {
    assertThatThrownBy(() -> settings(Map.of("master.url", "https://admin:s3cret@host:6443")))
        .isInstanceOf(InvalidSettingException.class)
        .hasMessageStartingWith("master.url: ")
        .hasMessageNotContaining("s3cret");
  }

  @Test
  void unreadableKubeconfigIsRejected() {
    assertInvalid(Map.of("kubeconfig.path", dir.resolve("missing").toString()), "kubeconfig.path");
    assertInvalid(Map.of("kubeconfig.path", dir.toString()), "kubeconfig.path");
  }

  @Test
  void contextWithOnlyAMasterUrlIsRejected() {
    assertInvalid(Map.of("master.url", "http://127.0.0.1:8001", "context", "prod"), "context");
  }

  @Test
  void nonPositiveTimeoutsAreRejected() {
    assertInvalid(Map.of("request.timeout", -1), "request.timeout");
    assertInvalid(Map.of("request.timeout", 0), "request.timeout");
    assertInvalid(Map.of("connection.timeout", "-5"), "connection.timeout");
  }

  @Test
  void watchRestartsAreShapedAsConfigured() {
    KubeSettings settings = settings(Map.of("node.name", "n", "watch.restart.rate", "50.5",
        "watch.restart.burst", 7));
    assertThat(settings.watch().restartRate()).isEqualTo(50.5);
    assertThat(settings.watch().restartBurst()).isEqualTo(7);
    assertThat(settings(Map.of("node.name", "n")).watch().restartRate()).isEqualTo(400);
    assertInvalid(Map.of("watch.restart.rate", 0), "watch.restart.rate");
    assertInvalid(Map.of("watch.restart.rate", "-1.5"), "watch.restart.rate");
    assertInvalid(Map.of("watch.restart.burst", 0), "watch.restart.burst");
  }

  @Test
  void builderValidatesLikeTheConfiguration() {
    assertThatThrownBy(() -> KubeSettings.builder().masterUrl("http://127.0.0.1:1").build())
        .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.key()).isEqualTo("node.name"));
    assertThatThrownBy(() -> KubeSettings.builder().nodeName("n").requestTimeout(Duration.ofDays(30)).build())
        .isInstanceOfSatisfying(InvalidSettingException.class,
            e -> assertThat(e.key()).isEqualTo("request.timeout"));
  }
}
