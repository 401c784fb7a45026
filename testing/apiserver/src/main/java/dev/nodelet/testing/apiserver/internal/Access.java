package dev.nodelet.testing.apiserver.internal;

import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.HttpUrl;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * What a request asks for, in the terms an authorizer decides on, parsed as the API server's request info resolver
 * does ({@code k8s.io/apiserver/pkg/endpoints/request/requestinfo.go}): API group, resource and subresource,
 * namespace, name and verb. A list or watch with the field selector {@code metadata.name=<name>} names that object,
 * so {@code resourceNames} can allow it.
 *
 * @param resourceRequest false for paths outside {@code /api/<version>/...} and {@code /apis/<group>/<version>/...}
 *     (discovery, {@code /version}); the other fields are then empty
 */
record Access(boolean resourceRequest, Verb verb, String apiGroup, String resource, String subresource,
    String namespace, String name, String path) {

  private static final Set<String> NAMESPACE_SUBRESOURCES = Set.of("status", "finalize");

  /** The version in the path ({@code v1} of {@code /apis/resource.k8s.io/v1/...}); empty for a non-resource path. */
  String version() {
    if (!resourceRequest) {
      return "";
    }
    String[] parts = path.split("/");
    return apiGroup.isEmpty() ? parts[2] : parts[3];
  }

  /** The group version in the path, {@code v1} or {@code resource.k8s.io/v1}. */
  String apiVersion() {
    return apiGroup.isEmpty() ? version() : apiGroup + "/" + version();
  }

  static Access of(HttpMethod method, String pathAndQuery) {
    HttpUrl url = HttpUrl.parse("http://localhost" + (pathAndQuery.startsWith("/") ? "" : "/") + pathAndQuery);
    String path = url.uri().getRawPath();
    List<String> parts = new ArrayList<>(Arrays.stream(path.split("/")).filter(s -> !s.isEmpty()).toList());
    Access nonResource = new Access(false, verbOf(method, true, false), "", "", "", "", "", path);
    String group;
    if (parts.size() >= 3 && parts.get(0).equals("api")) {
      group = "";
      parts = parts.subList(2, parts.size());
    } else if (parts.size() >= 4 && parts.get(0).equals("apis")) {
      group = parts.get(1);
      parts = parts.subList(3, parts.size());
    } else {
      return nonResource;
    }
    boolean watch = "true".equals(url.queryParameter("watch")) || "1".equals(url.queryParameter("watch"));
    if (parts.get(0).equals("watch") && parts.size() > 1) { // the deprecated /watch/ prefix
      watch = true;
      parts = parts.subList(1, parts.size());
    }
    String namespace = "";
    if (parts.get(0).equals("namespaces") && parts.size() > 1) {
      namespace = parts.get(1);
      if (parts.size() > 2 && !NAMESPACE_SUBRESOURCES.contains(parts.get(2))) {
        parts = parts.subList(2, parts.size());
      }
    }
    String resource = parts.get(0);
    String name = parts.size() > 1 ? parts.get(1) : "";
    String subresource = parts.size() > 2 ? parts.get(2) : "";
    Verb verb = verbOf(method, name.isEmpty(), watch);
    if (verb == Verb.LIST || verb == Verb.WATCH) {
      name = selectedName(url.queryParameter("fieldSelector"));
    }
    return new Access(true, verb, group, resource, subresource, namespace, name, path);
  }

  private static Verb verbOf(HttpMethod method, boolean noName, boolean watch) {
    return switch (method) {
      case POST -> Verb.CREATE;
      case PUT -> Verb.UPDATE;
      case PATCH -> Verb.PATCH;
      case DELETE -> noName ? Verb.DELETECOLLECTION : Verb.DELETE;
      default -> watch ? Verb.WATCH : noName ? Verb.LIST : Verb.GET;
    };
  }

  /** The name an exact {@code metadata.name} requirement of a field selector asks for, else empty. */
  static String selectedName(String fieldSelector) {
    if (fieldSelector != null) {
      for (String term : fieldSelector.split(",")) {
        String t = term.trim();
        for (String prefix : List.of("metadata.name==", "metadata.name=")) {
          if (t.startsWith(prefix)) {
            return t.substring(prefix.length());
          }
        }
      }
    }
    return "";
  }

  /** The RBAC verb, e.g. {@code list}. */
  String rbacVerb() {
    return verb.name().toLowerCase(java.util.Locale.ROOT);
  }

  /** The resource as RBAC rules name it: {@code pods} or {@code pods/status}. */
  String qualifiedResource() {
    return subresource.isEmpty() ? resource : resource + "/" + subresource;
  }
}
