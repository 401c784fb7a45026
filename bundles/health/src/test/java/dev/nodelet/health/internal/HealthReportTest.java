package dev.nodelet.health.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import org.apache.felix.hc.api.Result;
import org.junit.jupiter.api.Test;
import org.osgi.util.converter.Converters;

class HealthReportTest {

  private static HealthReport.Check check(String name, Result.Status status, String message) {
    return new HealthReport.Check(name, List.of("nodelet"), status, List.of(message), 3, false);
  }

  @Test
  void healthyIsOkAloneUnlessVerboseAsTheApiServerAnswers() {
    HealthReport report = new HealthReport("readyz", List.of(check("nodelet-apiserver", Result.Status.OK, "up"),
        check("nodelet-node", Result.Status.WARN, "slow")));
    assertThat(report.healthy()).isTrue();
    assertThat(report.text(false)).isEqualTo("ok\n");
    assertThat(report.text(true)).isEqualTo("[+]nodelet-apiserver ok\n[+]nodelet-node ok (warning: slow)\n"
        + "readyz check passed\n");
  }

  @Test
  void aFailingCheckFailsTheProbeAndSaysWhy() {
    HealthReport report = new HealthReport("readyz", List.of(check("nodelet-apiserver", Result.Status.CRITICAL,
        "the API server at http://127.0.0.1:1/ does not answer"), check("nodelet-node", Result.Status.OK, "uid")));
    assertThat(report.healthy()).isFalse();
    assertThat(report.overall()).isEqualTo(Result.Status.CRITICAL);
    assertThat(report.text(false)).isEqualTo("[-]nodelet-apiserver failed: CRITICAL the API server at "
        + "http://127.0.0.1:1/ does not answer\n[+]nodelet-node ok\nreadyz check failed\n");
  }

  @Test
  void noCheckAtAllIsNotHealthy() {
    HealthReport report = new HealthReport("livez", List.of());
    assertThat(report.healthy()).isFalse();
    assertThat(report.text(false)).isEqualTo("[-]no health check registered yet\nlivez check failed\n");
  }

  @Test
  void jsonHasTheShapeOfFelixHealthChecks() throws Exception {
    HealthReport report = new HealthReport("health", List.of(check("nodelet-cache-sync",
        Result.Status.TEMPORARILY_UNAVAILABLE, "configmaps: 1 of 2 objects stale")));
    JsonNode json = new ObjectMapper().readTree(report.json());
    assertThat(json.get("overallResult").asText()).isEqualTo("TEMPORARILY_UNAVAILABLE");
    assertThat(json.get("results").get(0).get("name").asText()).isEqualTo("nodelet-cache-sync");
    assertThat(json.get("results").get(0).get("messages").get(0).asText()).contains("1 of 2 objects stale");
    assertThat(json.get("results").get(0).get("tags").get(0).asText()).isEqualTo("nodelet");
  }

  @Test
  void aBadPortOrAddressIsRefusedNamingTheKey() {
    assertThatThrownBy(() -> HealthEndpoint.address(config(Map.of("port", 70000))))
        .hasMessage("port: must be between 0 and 65535 (0 for a free one), was 70000");
    assertThatThrownBy(() -> HealthEndpoint.address(config(Map.of("address", "no such host.invalid"))))
        .hasMessageContaining("address").hasMessageContaining("no such host.invalid");
    assertThat(HealthEndpoint.address(config(Map.of())).getAddress().isLoopbackAddress()).isTrue();
  }

  private static HealthConfiguration config(Map<String, Object> properties) {
    return Converters.standardConverter().convert(properties).to(HealthConfiguration.class);
  }
}
