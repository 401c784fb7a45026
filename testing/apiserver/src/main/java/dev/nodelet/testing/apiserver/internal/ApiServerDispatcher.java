package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.nodelet.testing.apiserver.RecordedWrite;
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
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.HttpUrl;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The API server's request handling: authorization, discovery, then each resource request routed to its verb
 * (get and list, the writes, {@link Watches}) over the {@link ObjectStore}, with injected faults and delays, the
 * write record and the default Status of a failure without a body.
 */
public final class ApiServerDispatcher extends Dispatcher {

  private static final Logger LOG = LoggerFactory.getLogger(ApiServerDispatcher.class);

  /** The feature gates a server can be built without. */
  public static final Set<String> FEATURE_GATES = Admission.FEATURE_GATE_FIELDS.keySet();

  private final ObjectStore store;
  private final Watches watches;
  private final boolean validateNames;
  private final Faults faults = new Faults();
  private final Authorizer authorizer;

  public ApiServerDispatcher(int historySize, Duration bookmarkInterval, Authorizer authorizer,
      boolean validateNames, Set<String> disabledFeatureGates) {
    this.authorizer = authorizer;
    this.store = new ObjectStore(disabledFeatureGates);
    this.watches = new Watches(store, historySize, bookmarkInterval);
    store.onChange(watches::changed);
    this.validateNames = validateNames;
    // the namespaces every cluster has
    for (String namespace : List.of("default", "kube-system", "kube-public", "kube-node-lease")) {
      store.handleCreate(new RecordedRequest("HTTP/1.1", HttpMethod.POST, "/api/v1/namespaces",
          Headers.builder().build(), new Buffer(("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":"
              + "{\"name\":\"" + namespace + "\"}}").getBytes(StandardCharsets.UTF_8))));
    }
  }

  public Authorizer authorizer() {
    return authorizer;
  }

  public Faults faults() {
    return faults;
  }

  public long currentResourceVersion() {
    return store.currentResourceVersion();
  }

  public List<RecordedWrite> writes() {
    return List.copyOf(writes);
  }

  public long requestCount(Verb verb, String resource) {
    LongAdder count = requests.get(verb + " " + resource);
    return count == null ? 0 : count.sum();
  }

  public void clearWrites() {
    writes.clear();
  }

  /** The watches, for a transport that opens and closes their sessions. */
  Watches watches() {
    return watches;
  }

  /** Starts the timer that sends bookmarks and ends watches at their timeout. */
  public void start() {
    watches.start();
  }

  /** Ends every watch and stops the timer; stored objects stay. */
  public void stop() {
    watches.stop();
  }

  public void cutWatches() {
    watches.cutWatches();
  }

  public int openWatches(String resource, String fieldSelector) {
    return watches.openWatches(resource, fieldSelector);
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
    try {
      return answer(request);
    } catch (RuntimeException e) {
      // a bug here must still answer the client, as a real API server would with a 500
      LOG.error("internal error on {} {}", request.getMethod(), request.getPath(), e);
      return Status.response(500, "internal error: " + e);
    }
  }

  private MockResponse answer(RecordedRequest request) {
    if (request.getPath().startsWith(OBSERVE_PATH)) {
      return observe(request);
    }
    Access access = Access.of(request.method(), request.getPath());
    if (!access.resourceRequest()) {
      MockResponse denied = authorizer.check(request);
      return denied != null ? denied : Discovery.answer(access.path(), request.getHeader("Host"),
          request.getHeader("Accept"));
    }
    RequestInfo info = RequestInfo.of(request);
    counted(info);
    // as in the API server, authentication and authorization come before anything else
    MockResponse response = authorizer.check(request);
    Resource resource = Resources.find(access.apiVersion(), access.resource())
        .filter(r -> access.subresource().isEmpty() || r.subresources().contains(access.subresource()))
        .orElse(null);
    if (response == null && resource == null) {
      response = Discovery.notFound();
    }
    if (response == null && !allowed(request.method(), access)) {
      response = Status.response(405, "the server does not allow this method on the requested resource");
    }
    if (response == null) {
      OptionalInt injected = faults.take(info.verb(), info.resource());
      if (injected.isPresent()) {
        response = Status.response(injected.getAsInt(), "injected failure of " + info.verb() + " "
            + info.resource());
      } else {
        try {
          response = route(request, info, resource);
        } catch (IllegalArgumentException e) {
          response = Status.response(400, e.getMessage());
        }
      }
    }
    if (info.verb().isWrite()) {
      record(info, request, response);
    }
    if (response.code() >= 400 && (response.getBody() == null || response.getBody().size() == 0)) {
      String what = info.name() == null ? info.resource() : info.resource() + " \"" + info.name() + "\"";
      response = Status.response(response.code(), response.code() == 404 ? what + " not found" : what);
    }
    if (response.getHeaders().get("Content-Type") == null) {
      response.setHeader("Content-Type", "application/json");
    }
    Duration delay = faults.delay();
    return delay.isZero() ? response : response.setBodyDelay(delay);
  }

  /** POST goes to a collection, PUT and PATCH to an object, as the API server routes them. */
  private static boolean allowed(HttpMethod method, Access access) {
    boolean named = !access.path().matches(".*/" + Pattern.quote(access.resource()) + "/?$");
    return switch (method) {
      case POST -> !named;
      case PUT, PATCH -> named;
      default -> true;
    };
  }

  /** A resource request to its verb, once authorized, found and allowed. */
  private MockResponse route(RecordedRequest request, RequestInfo info, Resource resource) {
    return switch (info.verb()) {
      case WATCH -> watches.watch(request, info, resource);
      case LIST -> list(request, info, resource);
      case CREATE, UPDATE, PATCH -> write(request, info, resource);
      case DELETE -> delete(request, info, resource);
      case DELETECOLLECTION -> deleteCollection(request, info);
      default -> get(request, info, resource);
    };
  }




  private MockResponse get(RecordedRequest request, RequestInfo info, Resource resource) {
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

  private MockResponse list(RecordedRequest request, RequestInfo info, Resource resource) {
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


  private static final String NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"; // as the apiserver's generateName
  private static final SecureRandom RANDOM = new SecureRandom();



  /** A create, update or patch; a rejection by admission is an Invalid (or its own code) Status. */
  private MockResponse write(RecordedRequest request, RequestInfo info, Resource resource) {
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
  private MockResponse delete(RecordedRequest request, RequestInfo info, Resource resource) {
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
    DELETED.set(deleted);
    if (resource.plural().equals("pods")) {
      return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json")
          .setBody(deleted);
    }
    return Status.success(resource, info.name(), Json.read(deleted).path("metadata").path("uid").asText(null));
  }

  private MockResponse deleteCollection(RecordedRequest request, RequestInfo info) {
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


  private static final String OBSERVE_PATH = "/nodelet-testing/";

  /** The object the delete on this thread removed, for the write record: the answer is a Status. */
  private static final ThreadLocal<String> DELETED = new ThreadLocal<>();

  private final List<RecordedWrite> writes = new CopyOnWriteArrayList<>();
  private final Map<String, LongAdder> requests = new ConcurrentHashMap<>();





  private void counted(RequestInfo info) {
    requests.computeIfAbsent(info.verb() + " " + info.resource(), k -> new LongAdder()).increment();
  }


  /**
   * Observations as JSON, for tests whose code runs in another process, such as a forked OSGi framework:
   * {@code GET /nodelet-testing/watches?resource=configmaps[&fieldSelector=...]} gives the open watches
   * ({@code {"count":N}}), {@code /nodelet-testing/writes} the recorded writes and {@code /nodelet-testing/denied}
   * the denied requests (arrays of the records' fields). No token is needed: this is the test's view, not the API.
   */
  private MockResponse observe(RecordedRequest request) {
    HttpUrl url = HttpUrl.parse("http://localhost" + request.getPath());
    String what = url.uri().getRawPath().substring(OBSERVE_PATH.length());
    String resource = url.queryParameter("resource");
    String body;
    if (what.equals("watches") && resource != null) {
      body = "{\"count\":" + watches.openWatches(resource, url.queryParameter("fieldSelector")) + "}";
    } else if (what.equals("writes")) {
      body = Serialization.asJson(writes());
    } else if (what.equals("denied")) {
      body = Serialization.asJson(authorizer.denied());
    } else {
      return Status.response(404, "unknown observation: " + request.getPath());
    }
    return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json").setBody(body);
  }

  /** Records a write with the names a test asks about: namespace, name and the pod's node. */
  private void record(RequestInfo info, RecordedRequest request, MockResponse response) {
    String name = info.name();
    String nodeName = null;
    String namespace = info.namespace();
    GenericKubernetesResource object = null;
    String deleted = DELETED.get();
    DELETED.remove();
    if (deleted != null) {
      object = parseQuietly(deleted);
    } else if (response.code() < 300 && response.getBody() != null && response.getBody().size() > 0
        && info.verb() != Verb.DELETECOLLECTION) {
      object = parseQuietly(new String(response.getBody().getBytes(), StandardCharsets.UTF_8));
    } else if (request.getBody() != null && request.getBody().size() > 0) {
      object = parseQuietly(new String(request.getBody().getBytes(), StandardCharsets.UTF_8));
    }
    if (object != null && object.getMetadata() != null) {
      name = name != null ? name : object.getMetadata().getName(); // null for a failed generateName create
      nodeName = Fields.find(object, "spec.nodeName");
    }
    if (info.verb() == Verb.DELETECOLLECTION) {
      name = null;
      nodeName = selectedNodeName(info.param("fieldSelector"));
    }
    writes.add(new RecordedWrite(info.verb(), info.resource(), namespace, name, nodeName, response.code()));
  }

  private static String selectedNodeName(String fieldSelector) {
    if (fieldSelector != null) {
      for (String r : fieldSelector.split(",")) {
        if (r.trim().startsWith("spec.nodeName=")) {
          return r.trim().substring("spec.nodeName=".length());
        }
      }
    }
    return null;
  }

  private static GenericKubernetesResource parseQuietly(String json) {
    try {
      return Serialization.unmarshal(json, GenericKubernetesResource.class);
    } catch (RuntimeException e) {
      return null; // a malformed body is the stock handler's to reject; the write is still recorded
    }
  }
}
