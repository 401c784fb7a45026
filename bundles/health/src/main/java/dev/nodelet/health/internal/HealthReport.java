package dev.nodelet.health.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import org.apache.felix.hc.api.Result;
import org.apache.felix.hc.api.ResultLog;
import org.apache.felix.hc.api.execution.HealthCheckExecutionResult;

/**
 * The results of one run of health checks, as the endpoint shows them: the kube-apiserver's text of {@code /livez}
 * and {@code /readyz} ({@code [+]name ok} per check with {@code ?verbose}), or JSON in the shape of Felix Health
 * Checks' {@code /system/health}.
 */
final class HealthReport {

  /** One check's outcome, reduced to what is shown. */
  record Check(String name, List<String> tags, Result.Status status, List<String> messages, long millis,
      boolean timedOut) {
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  private final String endpoint;
  private final List<Check> checks;

  HealthReport(String endpoint, List<Check> checks) {
    this.endpoint = endpoint;
    this.checks = List.copyOf(checks);
  }

  static HealthReport of(String endpoint, List<HealthCheckExecutionResult> results) {
    List<Check> checks = new ArrayList<>(results.size());
    for (HealthCheckExecutionResult result : results) {
      List<String> messages = new ArrayList<>();
      for (ResultLog.Entry entry : result.getHealthCheckResult()) {
        if (!entry.isDebug()) {
          messages.add(entry.getMessage());
        }
      }
      checks.add(new Check(result.getHealthCheckMetadata().getName(), result.getHealthCheckMetadata().getTags(),
          result.getHealthCheckResult().getStatus(), messages, result.getElapsedTimeInMs(), result.hasTimedOut()));
    }
    return new HealthReport(endpoint, checks);
  }

  List<Check> checks() {
    return checks;
  }

  /** OK and WARN pass, as with Felix's servlet; no check at all does not pass (nothing that could tell is up). */
  static boolean passes(Result.Status status) {
    return status == Result.Status.OK || status == Result.Status.WARN;
  }

  boolean healthy() {
    return !checks.isEmpty() && checks.stream().allMatch(c -> passes(c.status()));
  }

  Result.Status overall() {
    Result.Status worst = checks.isEmpty() ? Result.Status.TEMPORARILY_UNAVAILABLE : Result.Status.OK;
    for (Check check : checks) {
      if (check.status().ordinal() > worst.ordinal()) {
        worst = check.status();
      }
    }
    return worst;
  }

  /**
   * The kube-apiserver's text: "ok" alone when healthy and not verbose; otherwise a line per check and a verdict.
   */
  String text(boolean verbose) {
    boolean healthy = healthy();
    if (healthy && !verbose) {
      return "ok\n";
    }
    StringBuilder text = new StringBuilder();
    for (Check check : checks) {
      if (passes(check.status())) {
        text.append("[+]").append(check.name()).append(" ok");
        if (check.status() == Result.Status.WARN && !check.messages().isEmpty()) {
          text.append(" (warning: ").append(String.join("; ", check.messages())).append(')');
        }
      } else {
        text.append("[-]").append(check.name()).append(" failed: ")
            .append(check.timedOut() ? "timed out" : check.status() + " " + String.join("; ", check.messages()));
      }
      text.append('\n');
    }
    if (checks.isEmpty()) {
      text.append("[-]no health check registered yet\n");
    }
    text.append(endpoint).append(healthy ? " check passed\n" : " check failed\n");
    return text.toString();
  }

  /** Felix Health Checks' JSON: overallResult and a result per check with its messages. */
  String json() {
    ObjectNode root = JSON.createObjectNode();
    root.put("overallResult", overall().name());
    ArrayNode results = root.putArray("results");
    for (Check check : checks) {
      ObjectNode result = results.addObject();
      result.put("name", check.name());
      result.put("status", check.status().name());
      result.put("timeInMs", check.millis());
      result.put("timedOut", check.timedOut());
      ArrayNode tags = result.putArray("tags");
      check.tags().forEach(tags::add);
      ArrayNode messages = result.putArray("messages");
      check.messages().forEach(messages::add);
    }
    try {
      return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n";
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot write the health report as JSON", e);
    }
  }
}
