package dev.nodelet.metrics.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.configuration.RecordingPublisher;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.osgi.util.converter.Converters;

class MetricsEndpointTest {

  private final HttpClient http = HttpClient.newHttpClient();
  private MetricsEndpoint endpoint;

  @AfterEach
  void stop() {
    if (endpoint != null) {
      endpoint.deactivate();
    }
  }

  private static MetricsConfiguration config(Map<String, Object> map) {
    return Converters.standardConverter().convert(map).to(MetricsConfiguration.class);
  }

  private HttpResponse<String> scrape(String accept) throws Exception {
    URI uri = URI.create("http://127.0.0.1:" + endpoint.address().getPort() + "/metrics");
    HttpRequest.Builder request = HttpRequest.newBuilder(uri);
    if (accept != null) {
      request.header("Accept", accept);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void servesTheCollectorsOfTheWhiteboardInBothFormats() throws Exception {
    endpoint = new MetricsEndpoint(new RecordingPublisher(), config(Map.of("port", 0)));
    assertThat(endpoint.address().getAddress().isLoopbackAddress()).isTrue();
    Counter counter = Counter.builder().name("nodelet_test_events_total").help("events").labelNames("kind").build();
    MultiCollector collector = () -> MetricSnapshots.of(counter.collect());
    endpoint.addCollector(collector);
    counter.labelValues("a").inc(3);

    HttpResponse<String> text = scrape(null);
    assertThat(text.statusCode()).isEqualTo(200);
    assertThat(text.headers().firstValue("Content-Type")).hasValueSatisfying(
        type -> assertThat(type).startsWith("text/plain; version=0.0.4"));
    assertThat(text.body()).contains("# TYPE nodelet_test_events_total counter")
        .contains("nodelet_test_events_total{kind=\"a\"} 3.0");

    HttpResponse<String> open = scrape("application/openmetrics-text; version=1.0.0; charset=utf-8");
    assertThat(open.headers().firstValue("Content-Type")).hasValueSatisfying(
        type -> assertThat(type).startsWith("application/openmetrics-text"));
    assertThat(open.body()).contains("# TYPE nodelet_test_events counter")
        .contains("nodelet_test_events_total{kind=\"a\"} 3.0").endsWith("# EOF\n");

    endpoint.removeCollector(collector);
    assertThat(scrape(null).body()).doesNotContain("nodelet_test_events_total");
  }

  @Test
  void twoContributionsOfOneFamilyAreServedTogether() throws Exception {
    endpoint = new MetricsEndpoint(new RecordingPublisher(), config(Map.of("port", 0)));
    Counter first = Counter.builder().name("nodelet_test_devices_total").help("d").labelNames("driver").build();
    Counter second = Counter.builder().name("nodelet_test_devices_total").help("d").labelNames("driver").build();
    first.labelValues("a").inc();
    second.labelValues("b").inc(2);
    endpoint.addCollector(() -> MetricSnapshots.of(first.collect()));
    endpoint.addCollector(() -> MetricSnapshots.of(second.collect()));
    HttpResponse<String> text = scrape(null);
    assertThat(text.statusCode()).isEqualTo(200);
    assertThat(text.body()).contains("nodelet_test_devices_total{driver=\"a\"} 1.0")
        .contains("nodelet_test_devices_total{driver=\"b\"} 2.0");
  }

  @Test
  void aNewPortMovesTheEndpointAndDeactivationLeavesNoThreadOrSocket() throws Exception {
    endpoint = new MetricsEndpoint(new RecordingPublisher(), config(Map.of("port", 0)));
    int first = endpoint.address().getPort();
    assertThat(scrape(null).statusCode()).isEqualTo(200);

    int free;
    try (ServerSocket socket = new ServerSocket(0)) {
      free = socket.getLocalPort();
    }
    endpoint.modified(config(Map.of("port", free, "address", "localhost")), Map.of());
    int second = endpoint.address().getPort();
    assertThat(scrape(null).statusCode()).isEqualTo(200);
    assertThat(second).isEqualTo(free);
    assertThatThrownBy(() -> HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + first + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()))
        .isInstanceOf(ConnectException.class);

    endpoint.deactivate();
    endpoint = null;
    assertThatThrownBy(() -> http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + second + "/metrics"))
        .build(), HttpResponse.BodyHandlers.ofString())).isInstanceOf(IOException.class);
    assertThat(Thread.getAllStackTraces().keySet()).noneMatch(
        thread -> thread.getName().startsWith(MetricsEndpoint.THREAD_PREFIX) && thread.isAlive());
  }

  @Test
  void badConfigurationIsRefusedNamingTheKeyAndTheLastGoodOneStays() throws Exception {
    RecordingPublisher registry = new RecordingPublisher();
    endpoint = new MetricsEndpoint(registry, config(Map.of("port", 70000)));
    assertThat(registry.health()).startsWith("CRITICAL the metrics endpoint waits for a valid configuration"
        + " dev.nodelet.metrics: port").contains("70000");
    assertThatThrownBy(endpoint::address).isInstanceOf(IllegalStateException.class);
    endpoint.modified(config(Map.of("port", 0, "address", "no such host.invalid")), Map.of());
    assertThat(registry.health()).contains("address: ");
    endpoint.modified(config(Map.of("port", 0)), Map.of());
    assertThat(registry.healthCheck()).as("the first valid configuration brings it up").isEmpty();
    assertThat(scrape(null).statusCode()).isEqualTo(200);
    endpoint.deactivate();

    endpoint = new MetricsEndpoint(new RecordingPublisher(), config(Map.of("port", 0)));
    int port = endpoint.address().getPort();
    endpoint.modified(config(Map.of("port", -1)), Map.of());
    assertThat(endpoint.address().getPort()).isEqualTo(port);
    assertThat(scrape(null).statusCode()).isEqualTo(200);
  }

  @Test
  void aPortInUseWaitsSayingWhatToDo() {
    endpoint = new MetricsEndpoint(new RecordingPublisher(), config(Map.of("port", 0)));
    int taken = endpoint.address().getPort();
    assertThat(RecordingPublisher.waits(r -> new MetricsEndpoint(r, config(Map.of("port", taken))),
        MetricsEndpoint::deactivate))
        .contains("cannot listen on 127.0.0.1:" + taken).contains("free port");
  }
}
