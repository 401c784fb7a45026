package dev.nodelet.testing.apiserver.internal;

import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.client.server.mock.KubernetesAttributesExtractor;
import io.fabric8.mockwebserver.http.HttpUrl;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.Map;

/** What a request addresses: verb, resource, namespace, name and its query parameters. */
record RequestInfo(Verb verb, String api, String version, String resource, String namespace, String name,
    HttpUrl url) {

  private static final KubernetesAttributesExtractor PATHS = new KubernetesAttributesExtractor();

  static RequestInfo of(RecordedRequest request) {
    String path = request.getPath();
    Map<String, String> parts = PATHS.fromKubernetesPath(path);
    HttpUrl url = HttpUrl.parse("http://localhost" + (path.startsWith("/") ? path : "/" + path));
    String name = parts.get(KubernetesAttributesExtractor.NAME);
    boolean watch = "true".equals(url.queryParameter("watch")) || "1".equals(url.queryParameter("watch"));
    Verb verb = switch (request.method()) {
      case POST -> Verb.CREATE;
      case PUT -> Verb.UPDATE;
      case PATCH -> Verb.PATCH;
      case DELETE -> name == null ? Verb.DELETECOLLECTION : Verb.DELETE;
      default -> watch ? Verb.WATCH : name == null ? Verb.LIST : Verb.GET;
    };
    return new RequestInfo(verb, parts.get(KubernetesAttributesExtractor.API),
        parts.get(KubernetesAttributesExtractor.VERSION), parts.get(KubernetesAttributesExtractor.PLURAL),
        parts.get(KubernetesAttributesExtractor.NAMESPACE), name, url);
  }

  String param(String name) {
    return url.queryParameter(name);
  }

  String apiVersion() {
    return api == null ? version : api + "/" + version;
  }
}
