package dev.nodelet.kube.internal;

import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import org.osgi.service.component.annotations.Component;

/**
 * The API requests of every client this bundle builds, counted by a fabric8 interceptor, as the kubelet's client-go
 * counts them ({@code rest_client_requests_total}) and by Kubernetes verb and resource. A request is counted when its
 * answer arrives; one that gets no answer (connection refused) is not, since the clients make no retries and fabric8
 * tells interceptors of connection failures only before a retry. Labels never carry object
 * names, namespaces, query values or headers: only the method, the verb, the resource type, the status code and the
 * API server's host.
 */
@Component(service = {MultiCollector.class, KubeMetrics.class})
public final class KubeMetrics implements MultiCollector {

  /** The name under which the interceptor is added to each client. */
  static final String INTERCEPTOR = "nodelet-metrics";

  private final Counter requests = Counter.builder().name("rest_client_requests_total")
      .help("Number of HTTP requests to the API server, partitioned by status code, method, and host.")
      .labelNames("code", "method", "host").build();
  private final Counter apiRequests = Counter.builder().name("nodelet_apiserver_requests_total")
      .help("Number of requests to the API server, by Kubernetes verb (get, list, watch, create, update, patch,"
          + " delete), resource (with its subresource) and status code.")
      .labelNames("verb", "resource", "code").build();
  private final Interceptor interceptor = new Interceptor() {
    @Override
    public void after(HttpRequest request, HttpResponse<?> response,
        io.fabric8.kubernetes.client.http.AsyncBody.Consumer<List<ByteBuffer>> consumer) {
      count(request, Integer.toString(response.code()));
    }
  };

  /** @return the interceptor that counts the requests of a client */
  Interceptor interceptor() {
    return interceptor;
  }

  private void count(HttpRequest request, String code) {
    URI uri = request.uri();
    String host = uri.getPort() < 0 ? uri.getHost() : uri.getHost() + ":" + uri.getPort();
    requests.labelValues(code, request.method(), host).inc();
    ApiPath path = ApiPath.of(uri.getRawPath(), uri.getRawQuery(), request.method());
    apiRequests.labelValues(path.verb(), path.resource(), code).inc();
  }

  @Override
  public MetricSnapshots collect() {
    return MetricSnapshots.of(requests.collect(), apiRequests.collect());
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
