package dev.nodelet.kube.internal;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.VersionInfo;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * Readiness: the API server answers Nodelet's client ({@code GET /version}). Without a client (configuration
 * {@value KubeComponent#PID} missing or invalid) the check is critical rather than absent, so readiness cannot pass
 * for want of a check. Its result is kept 5 s, so that probes and conditions ask the API server at most that often.
 */
@Component(property = {HealthCheck.NAME + "=nodelet-apiserver", HealthCheck.TAGS + "=nodelet",
    HealthCheck.TAGS + "=nodelet-kube", HealthCheck.RESULT_CACHE_TTL_IN_MS + ":Long=5000"})
public final class ApiServerHealthCheck implements HealthCheck {

  @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  private volatile KubernetesClient client;

  @Override
  public Result execute() {
    KubernetesClient current = client;
    if (current == null) {
      return new Result(Result.Status.CRITICAL, "no Kubernetes client: the configuration " + KubeComponent.PID
          + " is invalid (see the log) or its bundle is stopping");
    }
    String server = String.valueOf(current.getMasterUrl());
    try {
      VersionInfo version = current.getKubernetesVersion();
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
