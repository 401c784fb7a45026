package dev.nodelet.kube.internal;

import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.net.URI;
import java.util.Locale;
import org.osgi.service.component.annotations.Component;

/**
 * The API requests of every client this bundle builds, measured under fabric8 by {@link MeteredHttpClient} or {@link
 * Http2Transport}, as the kubelet's client-go measures them ({@code rest_client_requests_total}, {@code
 * rest_client_request_duration_seconds}) and by Kubernetes verb and resource. Every attempt counts once its status line
 * arrives, or with the code {@value #NO_ANSWER} once it failed without one (connection refused, timeout), as client-go
 * counts it. Labels never carry object names, namespaces, query values or headers: only the method, the verb, the
 * resource type, the status code and the API server's host. Beside them: the requests that re-establish a watch through
 * the restart bucket of the bundle's {@code Reflectors}.
 */
@Component(service = {MultiCollector.class, KubeMetrics.class})
public final class KubeMetrics implements MultiCollector {

  /** The code of a request that got no answer, as client-go labels it. */
  static final String NO_ANSWER = "<error>";
  private static final double NANOS_PER_SECOND = 1e9;

  private final Counter requests = Counter.builder().name("rest_client_requests_total")
      .help("Number of HTTP requests to the API server, partitioned by status code, method, and host.")
      .labelNames("code", "method", "host").withoutExemplars().build();
  private final Histogram durations = Histogram.builder().name("rest_client_request_duration_seconds")
      .help("Request latency in seconds. Broken down by verb, and host.").labelNames("verb", "host")
      // client-go's buckets
      .classicOnly().classicUpperBounds(0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
      .withoutExemplars().build();
  private final Counter apiRequests = Counter.builder().name("nodelet_apiserver_requests_total")
      .help("Number of requests to the API server, by Kubernetes verb (get, list, watch, create, update, patch,"
          + " delete), resource (with its subresource) and status code; " + NO_ANSWER + " for none.")
      .labelNames("verb", "resource", "code").withoutExemplars().build();
  private final Counter watchRestarts = Counter.builder().name("nodelet_reflector_restart_requests_total")
      .help("Number of requests that re-establish a watch after a cut, a failure or an API server restart, counted"
          + " as each starts past the restart bucket (watch.restart.rate, watch.restart.burst), answered or not.")
      .withoutExemplars().build();

  /**
   * Counts and times one attempt.
   *
   * @param method the HTTP method
   * @param uri the request's URI; only its host, port and path are used
   * @param code the status code, or {@link #NO_ANSWER}
   * @param nanos from sending to the status line, or to the failure
   */
  void record(String method, URI uri, String code, long nanos) {
    String host = uri.getPort() < 0 ? uri.getHost() : uri.getHost() + ":" + uri.getPort();
    requests.labelValues(code, method, host).inc();
    durations.labelValues(method, host).observe(nanos / NANOS_PER_SECOND);
    ApiPath path = ApiPath.of(uri.getRawPath(), uri.getRawQuery(), method);
    apiRequests.labelValues(path.verb(), path.resource(), code).inc();
  }

  /** Counts one watch re-established by the reflectors of this bundle's client. */
  void watchRestarted() {
    watchRestarts.inc();
  }

  @Override
  public MetricSnapshots collect() {
    return MetricSnapshots.of(requests.collect(), durations.collect(), apiRequests.collect(),
        watchRestarts.collect());
  }

  /**
   * The verb and resource of a request path, as the API server's request info resolves them; names and namespaces
   * are dropped.
   */
  record ApiPath(String verb, String resource) {

    static ApiPath of(String path, String query, String method) {
      String[] parts = path == null ? new String[0] : path.replaceAll("^/+|/+$", "").split("/+");
      int start;
      if (parts.length >= 2 && parts[0].equals("api")) {
        start = 2; // /api/v1/...
      } else if (parts.length >= 3 && parts[0].equals("apis")) {
        start = 3; // /apis/group/version/...
      } else {
        // discovery, /version, /healthz...: fixed paths, kept as the first segment
        return new ApiPath(method.toLowerCase(Locale.ROOT), parts.length == 0 || parts[0].isEmpty() ? "/"
            : "/" + parts[0]);
      }
      int rest = parts.length - start;
      if (rest >= 3 && parts[start].equals("namespaces")) {
        start += 2; // namespaces/{ns}/{resource}...
        rest -= 2;
      }
      if (rest <= 0) {
        return new ApiPath(verb(method, query, false), "");
      }
      String resource = parts[start];
      boolean named = rest >= 2;
      if (rest >= 3) {
        resource = resource + "/" + parts[start + 2];
      }
      return new ApiPath(verb(method, query, named), resource);
    }

    private static String verb(String method, String query, boolean named) {
      switch (method.toUpperCase(Locale.ROOT)) {
        case "GET":
          if (query != null && (query.startsWith("watch=true") || query.contains("&watch=true")
              || query.startsWith("watch=1") || query.contains("&watch=1"))) {
            return "watch";
          }
          return named ? "get" : "list";
        case "POST":
          return "create";
        case "PUT":
          return "update";
        case "PATCH":
          return "patch";
        case "DELETE":
          return named ? "delete" : "deletecollection";
        default:
          return method.toLowerCase(Locale.ROOT);
      }
    }
  }
}
