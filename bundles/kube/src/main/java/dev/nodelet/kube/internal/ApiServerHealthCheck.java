package dev.nodelet.kube.internal;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.VersionInfo;
import java.util.Map;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;

/**
 * Readiness: the API server answers Nodelet's client ({@code GET /version}). Registered with the client by
 * {@link KubeComponent}; while there is none (configuration {@value KubeComponent#PID} invalid), the component's
 * waiting check holds readiness. Its result is kept 5 s, so that probes and conditions ask the API server at most that
 * often.
 */
final class ApiServerHealthCheck implements HealthCheck {

  /** The check's service properties. */
  static final Map<String, Object> PROPERTIES = Map.of(HealthCheck.NAME, "nodelet-apiserver",
      HealthCheck.TAGS, new String[] {"nodelet", "nodelet-kube"}, HealthCheck.RESULT_CACHE_TTL_IN_MS, 5000L);

  private final KubernetesClient client;

  ApiServerHealthCheck(KubernetesClient client) {
    this.client = client;
  }

  @Override
  public Result execute() {
    String server = String.valueOf(client.getMasterUrl());
    try {
      VersionInfo version = client.getKubernetesVersion();
      return new Result(Result.Status.OK, "the API server at " + server + " answers (version "
          + (version == null ? "unknown" : version.getGitVersion()) + ")");
    } catch (KubernetesClientException e) {
      return new Result(Result.Status.CRITICAL, "the API server at " + server + " does not answer: "
          + reason(e));
    }
  }

  private static String reason(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = root.getMessage();
    return root.getClass().getSimpleName() + (message == null ? "" : ": " + message);
  }
}
