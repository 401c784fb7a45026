package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.nodelet.testing.apiserver.Verb;
import dev.nodelet.testing.apiserver.internal.Resources.Resource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.server.mock.KubernetesAttributesExtractor;
import io.fabric8.kubernetes.client.server.mock.KubernetesResponseComposer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.crud.Attribute;
import io.fabric8.mockwebserver.crud.AttributeSet;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The create, update, patch, delete and deletecollection verbs: the body checked and completed as the API server
 * does (admission, size limits, field validation, generateName, managed fields, dry run), then stored by the store's
 * stock handlers, whose resourceVersion and conflict checks apply; delete preconditions checked first. Each write
 * holds the store's write monitor from its checks to its store.
 */
final class Writes {

  private static final String NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"; // as the apiserver's generateName
  private static final SecureRandom RANDOM = new SecureRandom();

  private final ObjectStore store;
  private final boolean validateNames;

  Writes(ObjectStore store, boolean validateNames) {
    this.store = store;
    this.validateNames = validateNames;
  }

  /** A create, update or patch; a rejection by admission is an Invalid (or its own code) Status. */
  MockResponse write(RecordedRequest request, RequestInfo info, Resource resource) {
    synchronized (store.writeMonitor()) {
      try {
        return createOrUpdate(request, info, resource);
      } catch (Admission.Rejected e) {
        return Status.invalid(e.code, e.getMessage(), resource, info.name(), e.causes);
      } finally {
        store.endWrite();
      }
    }
  }

  /**
   * A create, update or patch: the body checked and completed as the API server does, then stored by the stock
   * handler (an update, for a patch), whose resourceVersion and conflict checks apply.
   */
  private MockResponse createOrUpdate(RecordedRequest request, RequestInfo info, Resource resource) {
    String contentType = Objects.requireNonNullElse(request.getHeader("Content-Type"), "application/json");
    String mediaType = contentType.split(";")[0].trim().toLowerCase(Locale.ROOT);
    store.dryRun(DryRun.requested(info, null));
    String validation = Objects.requireNonNullElse(info.param("fieldValidation"), "Warn");
    if (!Set.of("Strict", "Warn", "Ignore").contains(validation)) {
      throw new IllegalArgumentException("fieldValidation: Unsupported value: \"" + validation
          + "\": supported values: \"Ignore\", \"Strict\", \"Warn\"");
    }
    String rawPath = info.url().uri().getRawPath();
    String path = request.getPath();
    boolean creating = info.verb() == Verb.CREATE;
    ObjectNode object;
    if (info.verb() == Verb.PATCH) {
      Map.Entry<AttributeSet, String> current;
      synchronized (store.eventLock()) {
        current = store.findResource(store.extractor().fromPath(rawPath));
      }
      JsonNode body = readJson(request, mediaType);
      if (mediaType.equals("application/apply-patch+yaml")) {
        object = Apply.request(info, resource, current == null ? null : (ObjectNode) Json.read(current.getValue()), body);
        if (current == null) { // apply creates: a POST to the collection
          creating = true;
          path = rawPath.substring(0, rawPath.lastIndexOf('/'))
              + (info.url().uri().getRawQuery() == null ? "" : "?" + info.url().uri().getRawQuery());
        }
      } else if (current == null) {
        return Status.notFound(resource, info.name());
      } else {
        JsonNode patched = Patches.byMediaType(mediaType, Json.read(current.getValue()), body);
        if (!(patched instanceof ObjectNode o)) {
          throw new IllegalArgumentException("the patch does not leave an object");
        }
        object = o;
      }
      if (current != null) {
        MockResponse otherUid = UidPrecondition.check(Json.read(current.getValue()), object);
        if (otherUid != null) {
          return otherUid;
        }
        String currentVersion = Json.read(current.getValue()).path("metadata").path("resourceVersion").asText();
        String patchedVersion = object.path("metadata").path("resourceVersion").asText("");
        if (!patchedVersion.isEmpty() && !patchedVersion.equals(currentVersion)) {
          return Status.conflict(resource, info.name());
        }
        object.with("metadata").put("resourceVersion", currentVersion);
      }
    } else if (mediaType.equals(Protobuf.MEDIA_TYPE) && Protobuf.DECODED.contains(resource.plural())) {
      object = Protobuf.decode(resource.plural(), request.getBody() == null ? new byte[0]
          : request.getBody().getBytes());
    } else {
      if (!(readJson(request, mediaType) instanceof ObjectNode o)) {
        throw new IllegalArgumentException("the request body is not a JSON object");
      }
      object = o;
    }
    Admission.admit(resource, object, info.namespace(), info.name(), validateNames && creating);
    SizeLimits.check(resource, object);
    List<String> warnings = new ArrayList<>();
    if (!validation.equals("Ignore")) {
      List<String> unknown = Admission.unknownFields(resource, object);
      if (!unknown.isEmpty() && validation.equals("Strict")) {
        return Status.response(400, "strict decoding error: " + String.join(", ",
            unknown.stream().map(f -> "unknown field \"" + f + "\"").toList()));
      }
      unknown.forEach(f -> warnings.add("unknown field \"" + f + "\""));
    }
    store.updateManager(mediaType.equals("application/apply-patch+yaml") ? null
        : ManagedFields.manager(info.param("fieldManager"), request.getHeader("User-Agent")));
    RecordedRequest forward = new RecordedRequest(request.getHttpVersion(),
        creating ? HttpMethod.POST : HttpMethod.PUT,
        path, request.getHeaders(), new Buffer(Serialization.asJson(object).getBytes(StandardCharsets.UTF_8)));
    MockResponse response = creating ? store.handleCreate(withGeneratedName(forward, info))
        : store.handleUpdate(forward);
    if (response.code() == 409) {
      String name = info.name() != null ? info.name() : object.path("metadata").path("name").asText();
      return creating ? Status.alreadyExists(resource, name) : Status.conflict(resource, name);
    }
    if (response.code() == 404) {
      return Status.notFound(resource, info.name());
    }
    String lastStored = store.lastStored();
    if (response.code() < 300 && lastStored != null) {
      response = new MockResponse().setResponseCode(creating ? 201 : 200)
          .setHeader("Content-Type", "application/json").setBody(store.dryRun() ? DryRun.answer(lastStored,
              creating ? null : Json.read(store.findResource(store.extractor().fromPath(rawPath)).getValue())
                  .path("metadata").path("resourceVersion").asText()) : lastStored);
    }
    for (String warning : warnings) {
      response.addHeader("Warning", "299 - \"" + warning.replace("\"", "\\\"") + "\"");
    }
    return response;
  }

  /** A delete: 200 with a Success Status (pods: the object) when gone, 202 with the object when finalizers hold it. */
  MockResponse delete(RecordedRequest request, RequestInfo info, Resource resource) {
    synchronized (store.writeMonitor()) {
      try {
        return deleteOne(request, info, resource);
      } finally {
        store.endWrite();
      }
    }
  }

  private MockResponse deleteOne(RecordedRequest request, RequestInfo info, Resource resource) {
    JsonNode options = readJson(request);
    store.dryRun(DryRun.requested(info, options));
    Map.Entry<AttributeSet, String> current = store.findResource(store.extractor()
        .fromPath(info.url().uri().getRawPath()));
    MockResponse failed = current == null ? null : DeleteOptions.preconditionFailure(options, current.getValue());
    if (failed != null) {
      return failed;
    }
    MockResponse graceful = current == null || !resource.plural().equals("pods") ? null : GracefulDeletion.pending(
        Json.read(current.getValue()), options, info, m -> markForDeletion(info.url().uri().getRawPath(), current, m));
    if (graceful != null) {
      return graceful;
    }
    MockResponse response = store.handleDelete(request.getPath());
    if (response.code() == 404) {
      return Status.notFound(resource, info.name());
    }
    if (response.code() >= 300) {
      return response;
    }
    if (store.lastStored() != null) { // still there: finalizers pending
      return new MockResponse().setResponseCode(202).setHeader("Content-Type", "application/json")
          .setBody(store.lastStored());
    }
    String deleted = response.getBody() == null ? "{}" : response.getBody().readUtf8();
    Observations.deleted(deleted);
    if (resource.plural().equals("pods")) {
      return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json")
          .setBody(deleted);
    }
    return Status.success(resource, info.name(), Json.read(deleted).path("metadata").path("uid").asText(null));
  }

  /** Stores a pod marked for graceful deletion with the next resourceVersion (a MODIFIED event); what it stored. */
  private String markForDeletion(String path, Map.Entry<AttributeSet, String> current, String marked) {
    ObjectNode pod = (ObjectNode) Json.read(marked);
    pod.with("metadata").put("resourceVersion", String.valueOf(store.requestResourceVersion()));
    store.processEvent(path, store.extractor().fromPath(path), current.getKey(), null, pod.toString());
    return store.lastStored();
  }

  MockResponse deleteCollection(RecordedRequest request, RequestInfo info) {
    AttributeSet query = store.query(info);
    List<String> deleted = new ArrayList<>();
    synchronized (store.writeMonitor()) {
      store.dryRun(DryRun.requested(info, readJson(request)));
      List<String> paths = new ArrayList<>();
      synchronized (store.eventLock()) {
        store.forEach((attributes, object) -> {
          if (attributes.matches(query)) {
            paths.add(objectPath(info, Serialization.unmarshal(object, GenericKubernetesResource.class)));
          }
        });
      }
      for (String path : paths) {
        MockResponse r = store.handleDelete(path);
        if (r.code() < 300 && r.getBody() != null) {
          deleted.add(r.getBody().readUtf8());
        }
      }
      store.dryRun(false);
    }
    return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json")
        .setBody(((KubernetesResponseComposer) store.getResponseComposer())
            .compose(deleted, String.valueOf(store.currentResourceVersion())));
  }

  private static String objectPath(RequestInfo info, GenericKubernetesResource object) {
    String namespace = object.getMetadata().getNamespace();
    return (info.api() == null ? "/api/" : "/apis/" + info.api() + "/") + info.version()
        + (namespace == null ? "" : "/namespaces/" + namespace) + "/" + info.resource() + "/"
        + object.getMetadata().getName();
  }

  /** Gives a create with {@code generateName} and no name a name with a 5-character suffix, as the API does. */
  private RecordedRequest withGeneratedName(RecordedRequest request, RequestInfo info) {
    JsonNode body = readJson(request);
    if (!(body instanceof ObjectNode) || !(body.get("metadata") instanceof ObjectNode metadata)) {
      return request; // the stock handler rejects it with a clear message
    }
    String name = metadata.path("name").asText("");
    String prefix = metadata.path("generateName").asText("");
    if (!name.isEmpty() || prefix.isEmpty()) {
      return request;
    }
    String candidate;
    do {
      StringBuilder sb = new StringBuilder(prefix);
      for (int i = 0; i < 5; i++) {
        sb.append(NAME_CHARS.charAt(RANDOM.nextInt(NAME_CHARS.length())));
      }
      candidate = sb.toString();
    } while (store.exists(store.extractor().fromPath(info.url().uri().getRawPath())
        .add(new Attribute(KubernetesAttributesExtractor.NAME, candidate))));
    metadata.put("name", candidate);
    return new RecordedRequest(request.getHttpVersion(), request.method(), request.getPath(), request.getHeaders(),
        new Buffer(Serialization.asJson(body).getBytes(StandardCharsets.UTF_8)));
  }

  private static JsonNode readJson(RecordedRequest request) {
    return readJson(request, "application/json");
  }

  /** The body of a request as JSON (YAML too, as the API server accepts it); 415 for another format. */
  private static JsonNode readJson(RecordedRequest request, String mediaType) {
    byte[] body = request.getBody() == null ? new byte[0] : request.getBody().getBytes();
    if (body.length == 0) {
      return MissingNode.getInstance();
    }
    boolean yaml = mediaType.endsWith("yaml");
    if (!yaml && !mediaType.endsWith("json")) {
      throw new Admission.Rejected(415, "the body of the request was in an unknown format - accepted media types "
          + "include: application/json, application/yaml, application/vnd.kubernetes.protobuf", List.of());
    }
    try {
      return yaml ? Serialization.yamlMapper().readTree(body) : Serialization.jsonMapper().readTree(body);
    } catch (IOException e) {
      throw new IllegalArgumentException("the request body is not valid " + (yaml ? "YAML" : "JSON") + ": "
          + e.getMessage());
    }
  }
}
