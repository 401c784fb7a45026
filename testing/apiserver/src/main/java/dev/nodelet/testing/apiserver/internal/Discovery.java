package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.nodelet.testing.apiserver.internal.Resources.Resource;
import io.fabric8.mockwebserver.http.MockResponse;
import java.util.List;
import java.util.Map;

/**
 * The paths that are not resources: version, discovery and health, answered as the API server answers them; any
 * other path gets a 404 {@code Status}.
 */
final class Discovery {

  /** The Kubernetes version the server claims: the API it models is that of this release. */
  static final String GIT_VERSION = "v1.34.0+nodelet";

  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  private Discovery() {
  }

  /** The answer for a non-resource path (no query string). */
  static MockResponse answer(String path, String serverAddress, String accept) {
    String p = path.length() > 1 && path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
    if (p.equals("/healthz") || p.equals("/livez") || p.equals("/readyz")) {
      return new MockResponse().setResponseCode(200).setHeader("Content-Type", "text/plain; charset=utf-8")
          .setBody("ok");
    }
    if (p.equals("/openapi/v2")) {
      return OpenApiV2.answer(accept);
    }
    if (p.equals("/openapi/v3") || p.startsWith("/openapi/v3/")) {
      String document = OpenApi.document(p.substring("/openapi/v3".length()));
      return document == null ? notFound() : new MockResponse().setResponseCode(200)
          .setHeader("Content-Type", "application/json").setBody(document);
    }
    if (p.equals("/version")) {
      return json(version());
    }
    if (p.equals("/api")) {
      ObjectNode versions = JSON.objectNode().put("kind", "APIVersions");
      versions.putArray("versions").add("v1");
      versions.putArray("serverAddressByClientCIDRs").addObject().put("clientCIDR", "0.0.0.0/0")
          .put("serverAddress", serverAddress);
      return json(versions);
    }
    if (p.equals("/apis")) {
      ObjectNode list = JSON.objectNode().put("kind", "APIGroupList").put("apiVersion", "v1");
      ArrayNode groups = list.putArray("groups");
      Resources.byGroupVersion().keySet().stream().filter(gv -> gv.contains("/"))
          .forEach(gv -> groups.add(group(gv)));
      return json(list);
    }
    Map<String, List<Resource>> served = Resources.byGroupVersion();
    if (p.equals("/api/v1")) {
      return json(resourceList("v1", served.get("v1")));
    }
    if (p.startsWith("/apis/")) {
      String rest = p.substring("/apis/".length());
      if (!rest.contains("/")) {
        for (String gv : served.keySet()) {
          if (gv.startsWith(rest + "/")) {
            return json(group(gv).put("kind", "APIGroup").put("apiVersion", "v1"));
          }
        }
      } else if (served.containsKey(rest)) {
        return json(resourceList(rest, served.get(rest)));
      }
    }
    return notFound();
  }

  static MockResponse notFound() {
    return Status.response(404, "the server could not find the requested resource");
  }

  static ObjectNode version() {
    String[] parts = GIT_VERSION.substring(1).split("[.+]");
    return JSON.objectNode()
        .put("major", parts[0])
        .put("minor", parts[1])
        .put("gitVersion", GIT_VERSION)
        .put("gitCommit", "0000000000000000000000000000000000000000")
        .put("gitTreeState", "clean")
        .put("buildDate", "2025-08-27T00:00:00Z")
        .put("goVersion", "java" + Runtime.version().feature())
        .put("compiler", "nodelet")
        .put("platform", System.getProperty("os.name").toLowerCase(java.util.Locale.ROOT) + "/"
            + System.getProperty("os.arch"));
  }

  private static ObjectNode group(String groupVersion) {
    String name = groupVersion.substring(0, groupVersion.indexOf('/'));
    String version = groupVersion.substring(groupVersion.indexOf('/') + 1);
    ObjectNode group = JSON.objectNode().put("name", name);
    ObjectNode gv = JSON.objectNode().put("groupVersion", groupVersion).put("version", version);
    group.putArray("versions").add(gv);
    group.set("preferredVersion", gv.deepCopy());
    return group;
  }

  private static ObjectNode resourceList(String groupVersion, List<Resource> resources) {
    ObjectNode list = JSON.objectNode().put("kind", "APIResourceList").put("apiVersion", "v1")
        .put("groupVersion", groupVersion);
    ArrayNode items = list.putArray("resources");
    for (Resource r : resources) {
      ObjectNode item = items.addObject().put("name", r.plural()).put("singularName", r.singular())
          .put("namespaced", r.namespaced()).put("kind", r.kind());
      Resources.VERBS.forEach(item.putArray("verbs")::add);
      if (!r.shortNames().isEmpty()) {
        r.shortNames().forEach(item.putArray("shortNames")::add);
      }
      if (r.group().isEmpty() && List.of("pods", "services").contains(r.plural())) {
        item.putArray("categories").add("all");
      }
      for (String sub : r.subresources()) {
        ObjectNode s = items.addObject().put("name", r.plural() + "/" + sub).put("singularName", "")
            .put("namespaced", r.namespaced()).put("kind", r.kind());
        Resources.SUBRESOURCE_VERBS.forEach(s.putArray("verbs")::add);
      }
    }
    return list;
  }

  private static MockResponse json(ObjectNode body) {
    return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json")
        .setBody(body.toString());
  }
}
