package dev.nodelet.health.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.configuration.RecordingPublisher;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.apache.felix.hc.api.execution.HealthCheckExecutionOptions;
import org.apache.felix.hc.api.execution.HealthCheckExecutionResult;
import org.apache.felix.hc.api.execution.HealthCheckExecutor;
import org.apache.felix.hc.api.execution.HealthCheckSelector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.osgi.util.converter.Converters;

/**
 * The endpoint on a real socket: a new port moves it in place, an invalid change leaves it where it is, an invalid
 * first configuration waits.
 */
class HealthEndpointTest {

  /** An executor with no health checks registered; these tests ask only paths that run none. */
  private static final HealthCheckExecutor NO_CHECKS = new HealthCheckExecutor() {
    @Override
    public List<HealthCheckExecutionResult> execute(HealthCheckSelector selector) {
      return List.of();
    }

    @Override
    public List<HealthCheckExecutionResult> execute(HealthCheckSelector selector,
        HealthCheckExecutionOptions options) {
      return List.of();
    }
  };

  private final HttpClient http = HttpClient.newHttpClient();
  private final RecordingPublisher registry = new RecordingPublisher();
  private HealthEndpoint endpoint;

  @AfterEach
  void stop() {
    if (endpoint != null) {
      endpoint.deactivate();
    }
  }

  private HealthEndpoint endpoint(Map<String, Object> properties) {
    return new HealthEndpoint(registry, NO_CHECKS, config(properties), properties);
  }

  private void modify(Map<String, Object> properties) {
    endpoint.modified(config(properties), properties);
  }

  private static HealthConfiguration config(Map<String, Object> properties) {
    return Converters.standardConverter().convert(properties).to(HealthConfiguration.class);
  }

  /** The status of a path the endpoint does not serve: 404 from the endpoint if it listens on the port. */
  private int unknownPath(int port) throws IOException, InterruptedException {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/nothing")).build(),
        HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  @Test
  void anInvalidChangeIsRefusedAndANewPortMovesTheEndpoint() throws Exception {
    endpoint = endpoint(Map.of("port", 0));
    int first = endpoint.port();
    assertThat(unknownPath(first)).isEqualTo(404);

    modify(Map.of("port", 70000));
    modify(Map.of("port", 0, "address", "no such host.invalid"));
    assertThat(endpoint.port()).isEqualTo(first);
    assertThat(unknownPath(first)).isEqualTo(404);

    int second = freePort();
    modify(Map.of("port", second));
    assertThat(endpoint.port()).isEqualTo(second);
    assertThat(unknownPath(second)).isEqualTo(404);
    assertThatThrownBy(() -> unknownPath(first)).as("the old port is closed").isInstanceOf(ConnectException.class);
  }

  @Test
  void anInvalidFirstConfigurationListensNowhereAndHoldsReadinessUntilAValidOne() throws Exception {
    endpoint = endpoint(Map.of("port", -1));
    assertThat(registry.health()).startsWith("CRITICAL the health endpoint waits for a valid configuration"
        + " dev.nodelet.health: port: must be between 0 and 65535 (0 for a free one), was -1");
    assertThatThrownBy(endpoint::port).isInstanceOf(IllegalStateException.class);

    int port = freePort();
    modify(Map.of("port", port));
    assertThat(endpoint.port()).isEqualTo(port);
    assertThat(unknownPath(port)).isEqualTo(404);
    assertThat(registry.healthCheck()).as("readiness no longer held").isEmpty();
  }

  @Test
  void aMisspeltKeyIsNamedWithTheKeyItMeant() {
    endpoint = endpoint(Map.of("port", 0, "adress", "0.0.0.0"));
    assertThat(endpoint.unknownKeys()).containsExactly("Configuration dev.nodelet.health: unknown key adress is "
        + "ignored; did you mean address? (etc/dev.nodelet.health.cfg)");
  }
}
