package dev.nodelet.metrics.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.configuration.RecordingPublisher;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.osgi.util.converter.Converters;

/** {@code /configz}: the effective configuration of every Nodelet PID, secrets redacted. */
class ConfigzTest {

  private static final String TOKEN = "c2VjcmV0LXRva2Vu";

  private final HttpClient http = HttpClient.newHttpClient();
  private final List<Configz.Pid> pids = new CopyOnWriteArrayList<>();
  private MetricsEndpoint endpoint;

  @AfterEach
  void stop() {
    if (endpoint != null) {
      endpoint.deactivate();
    }
  }

  private HttpResponse<String> get(String path) throws Exception {
    URI uri = URI.create("http://127.0.0.1:" + endpoint.address().getPort() + path);
    return http.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
  }

  private void start() {
    endpoint = new MetricsEndpoint(null, new RecordingPublisher(), Converters.standardConverter()
        .convert(Map.of("port", 0)).to(MetricsConfiguration.class), Map.of(), () -> new ArrayList<>(pids));
  }

  @Test
  void servesEachPidsEffectivePropertiesWithSecretsRedacted() throws Exception {
    start();
    pids.add(new Configz.Pid("dev.nodelet.store.watch", Optional.of(Map.of("service.pid", "dev.nodelet.store.watch",
        "felix.fileinstall.filename", "file:/node/etc/dev.nodelet.store.watch.cfg", "max.watches", 10,
        "resync.intervall.seconds", "5")), List.of(new Configz.Attribute("resync.interval.seconds", 60L, false),
        new Configz.Attribute("max.watches", 0L, false), new Configz.Attribute("persistence.key.file", "", false))));
    pids.add(new Configz.Pid("dev.nodelet.driver.example~gpu", Optional.of(Map.of("service.pid",
        "dev.nodelet.driver.example~gpu", "service.factoryPid", "dev.nodelet.driver.example", "registry.credential",
        TOKEN, "api.token", TOKEN, "devices", new String[] {"a", "b"})),
        List.of(new Configz.Attribute("registry.credential", null, true), new Configz.Attribute("devices", null,
            false), new Configz.Attribute("api.token", null, false))));
    pids.add(new Configz.Pid("dev.nodelet.dra", Optional.empty(), List.of(new Configz.Attribute("enabled", true,
        false))));

    HttpResponse<String> response = get("/configz");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).contains("application/json");
    assertThat(response.body()).doesNotContain(TOKEN).isEqualTo("""
        {
          "configurations": {
            "dev.nodelet.dra": {
              "configured": false,
              "properties": {
                "enabled": true
              },
              "setKeys": [],
              "unknownKeys": []
            },
            "dev.nodelet.driver.example~gpu": {
              "configured": true,
              "properties": {
                "api.token": "<redacted>",
                "devices": ["a", "b"],
                "registry.credential": "<redacted>"
              },
              "setKeys": ["api.token", "devices", "registry.credential"],
              "unknownKeys": []
            },
            "dev.nodelet.store.watch": {
              "configured": true,
              "file": "file:/node/etc/dev.nodelet.store.watch.cfg",
              "properties": {
                "max.watches": 10,
                "persistence.key.file": "",
                "resync.interval.seconds": 60
              },
              "setKeys": ["max.watches", "resync.intervall.seconds"],
              "unknownKeys": ["resync.intervall.seconds"]
            }
          }
        }
        """);
    assertThat(get("/other").statusCode()).isEqualTo(404);
    assertThat(get("/metrics").statusCode()).isEqualTo(200);
  }

  @Test
  void aSourceThatFailsAnswers503() throws Exception {
    endpoint = new MetricsEndpoint(null, new RecordingPublisher(), Converters.standardConverter()
        .convert(Map.of("port", 0)).to(MetricsConfiguration.class), Map.of(), () -> {
          throw new IllegalStateException("no Configuration Admin service");
        });
    HttpResponse<String> response = get("/configz");
    assertThat(response.statusCode()).isEqualTo(503);
    assertThat(response.body()).contains("no Configuration Admin service");
  }

  @Test
  void keysThatNameSecretsAreTold() {
    assertThat(Configz.secret("api.token")).isTrue();
    assertThat(Configz.secret("db_password")).isTrue();
    assertThat(Configz.secret("client-key")).isTrue();
    assertThat(Configz.secret("persistence.key.file")).as("where a key is kept").isFalse();
    assertThat(Configz.secret("max.watches")).isFalse();
    assertThat(Configz.secret("monkey")).isFalse();
  }

  @Test
  void theProcessAndJvmMetricsAreServed() throws Exception {
    start();
    String metrics = get("/metrics").body();
    assertThat(metrics).contains("process_cpu_seconds_total", "process_start_time_seconds",
        "jvm_threads_current", "jvm_threads_daemon", "jvm_memory_used_bytes{area=\"heap\"}",
        "jvm_gc_collection_seconds", "jvm_classes_currently_loaded", "jvm_runtime_info");
    if (System.getProperty("os.name").toLowerCase().contains("linux")) {
      assertThat(metrics).contains("process_resident_memory_bytes", "process_open_fds", "process_max_fds");
    }
  }

  @Test
  void aMisspeltKeyOfTheEndpointsConfigurationIsNamed() {
    Map<String, Object> configured = Map.of("port", 0, "adress", "0.0.0.0");
    endpoint = new MetricsEndpoint(null, new RecordingPublisher(), Converters.standardConverter()
        .convert(configured).to(MetricsConfiguration.class), configured, List::of);
    assertThat(endpoint.address().getAddress().isLoopbackAddress()).as("the default address stays").isTrue();
    assertThat(endpoint.unknownKeys()).containsExactly("Configuration dev.nodelet.metrics: unknown key adress is "
        + "ignored; did you mean address? (etc/dev.nodelet.metrics.cfg)");
  }
}
