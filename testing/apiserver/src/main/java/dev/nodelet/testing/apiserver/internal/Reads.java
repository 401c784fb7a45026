package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.nodelet.testing.apiserver.internal.Resources.Resource;
import io.fabric8.kubernetes.client.server.mock.KubernetesAttributesExtractor;
import io.fabric8.mockwebserver.crud.Attribute;
import io.fabric8.mockwebserver.crud.AttributeSet;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * The get and list verbs: one object by name (the store's name index), or a list by label and field selectors, in
 * key order and in pages; either as a Table when the client asks for one.
 */
final class Reads {

  private final ObjectStore store;

  Reads(ObjectStore store) {
    this.store = store;
  }

  MockResponse get(RecordedRequest request, RequestInfo info, Resource resource) {
    MockResponse found = store.handleGet(request.getPath());
    if (found.code() == 404) {
      return Status.notFound(resource, info.name());
    }
    if (found.code() == 200 && Tables.wanted(request.getHeader("Accept"))) {
      JsonNode object = Json.read(found.getBody().readUtf8());
      return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json")
          .setBody(Tables.of(resource, List.of(object), object.path("metadata").path("resourceVersion")
              .asText(null), info.param("includeObject"), true).toString());
    }
    return found;
  }

  MockResponse list(RecordedRequest request, RequestInfo info, Resource resource) {
    AttributeSet query = store.query(info);
    TreeMap<String, String> items = new TreeMap<>(); // by key, as etcd orders them
    long resourceVersion;
    synchronized (store.eventLock()) {
      store.forEach((attributes, object) -> {
        if (attributes.matches(query)) {
          items.put(keyOf(attributes), object);
        }
      });
      resourceVersion = store.currentResourceVersion();
    }
    String page = Lists.page(resource, items, resourceVersion, info.param("limit"), info.param("continue"));
    if (Tables.wanted(request.getHeader("Accept"))) {
      JsonNode list = Json.read(page);
      List<JsonNode> objects = new ArrayList<>();
      list.path("items").forEach(objects::add);
      ObjectNode table = Tables.of(resource, objects, list.path("metadata").path("resourceVersion").asText(),
          info.param("includeObject"), true);
      if (list.path("metadata").has("continue")) {
        table.with("metadata").set("continue", list.path("metadata").get("continue"));
        table.with("metadata").set("remainingItemCount", list.path("metadata").get("remainingItemCount"));
      }
      page = table.toString();
    }
    return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json").setBody(page);
  }

  private static String keyOf(AttributeSet attributes) {
    Attribute namespace = attributes.getAttribute(KubernetesAttributesExtractor.NAMESPACE);
    Attribute name = attributes.getAttribute(KubernetesAttributesExtractor.NAME);
    return (namespace == null ? "" : String.valueOf(namespace.getValues().iterator().next())) + "/"
        + (name == null ? "" : String.valueOf(name.getValues().iterator().next()));
  }
}
