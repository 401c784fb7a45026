package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.nodelet.testing.apiserver.RecordedWrite;
import dev.nodelet.testing.apiserver.Verb;
import dev.nodelet.testing.apiserver.internal.Resources.Resource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.server.mock.KubernetesAttributesExtractor;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.crud.Attribute;
import io.fabric8.mockwebserver.crud.AttributeSet;
import io.fabric8.mockwebserver.crud.AttributeType;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fabric8 CRUD dispatcher with the API server's semantics on top: every write goes through the stock handlers
 * (create, update, patch, delete with finalizers, 409 on a stale resourceVersion) and ends in
 * {@link #processEvent}, which this class takes over to keep field attributes, one resourceVersion sequence and a
 * bounded event history, and to feed the watches.
 *
 * <p>Locks, always taken in this order: {@code writeMonitor} (serialises writes, so checks before a stock handler
 * hold until it runs), the stock dispatcher's write lock, then {@code eventLock} (the map, the history and the set
 * of watches change together under it, so a watch starts from a consistent state).
 */
public final class ApiServerDispatcher extends KubernetesCrudDispatcher {

  private static final Logger LOG = LoggerFactory.getLogger(ApiServerDispatcher.class);
  private static final String NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"; // as the apiserver's generateName
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String OBSERVE_PATH = "/nodelet-testing/";

  /** One change, with the object's name: a watch of one object by name skips the others without matching them. */
  private record Event(long resourceVersion, String name, AttributeSet oldAttributes, AttributeSet newAttributes,
      String object) {
  }

  private final int historySize;
  private final Duration bookmarkInterval;
  private final Object writeMonitor = new Object();
  private final Object eventLock = new Object();
  private final ArrayDeque<Event> history = new ArrayDeque<>(); // guarded by eventLock
  // guarded by eventLock: the stored objects' attributes by object name, so that a watch of one object by its
  // metadata.name opens, and a get, update or patch finds its object, without a walk over every stored object (a
  // node watches thousands that way; the API server reads one key)
  private final Map<String, Set<AttributeSet>> byName = new HashMap<>();
  private final Map<AttributeSet, String> nameOf = new HashMap<>();
  private long compactedResourceVersion; // guarded by eventLock: events up to here are gone
  private volatile long currentResourceVersion;
  private final Set<WatchSession> watches = ConcurrentHashMap.newKeySet();
  // the same watches by the name their field selector requires, and those that require none: a write is matched
  // against the watches that can select it only (a node watches thousands of objects one by one)
  private final Map<String, Set<WatchSession>> watchesByName = new ConcurrentHashMap<>();
  private final Set<WatchSession> unnamedWatches = ConcurrentHashMap.newKeySet();
  private final KubernetesAttributesExtractor extractor = new KubernetesAttributesExtractor();
  private final Faults faults = new Faults();
  private final Authorizer authorizer;
  private final PodLogProxy podLogs = new PodLogProxy(this::handleGet);
  private final List<RecordedWrite> writes = new CopyOnWriteArrayList<>();
  private final Map<String, java.util.concurrent.atomic.LongAdder> requests = new ConcurrentHashMap<>();
  private volatile ScheduledExecutorService timer;
  private final boolean validateNames;
  private final Set<String> disabledFeatureGates;
  /** The object the delete on this thread removed, for the write record: the answer is a Status. */
  private static final ThreadLocal<String> DELETED = new ThreadLocal<>();
  private boolean dryRun; // guarded by writeMonitor: the write in progress stores nothing
  private final java.util.concurrent.atomic.AtomicLong resourceVersions = new java.util.concurrent.atomic.AtomicLong();
  private String lastStored; // guarded by writeMonitor: the object the write in progress stored
  private String updateManager; // guarded by writeMonitor: the manager of the write in progress, unless an apply

  /** The feature gates a server can be built without. */
  public static final Set<String> FEATURE_GATES = Admission.FEATURE_GATE_FIELDS.keySet();

  public ApiServerDispatcher(int historySize, Duration bookmarkInterval, Authorizer authorizer,
      boolean validateNames, Set<String> disabledFeatureGates) {
    this.validateNames = validateNames;
    this.disabledFeatureGates = disabledFeatureGates;
    this.historySize = historySize;
    this.bookmarkInterval = bookmarkInterval;
    this.authorizer = authorizer;
    // the namespaces every cluster has
    for (String namespace : List.of("default", "kube-system", "kube-public", "kube-node-lease")) {
      handleCreate(new RecordedRequest("HTTP/1.1", io.fabric8.mockwebserver.dsl.HttpMethod.POST,
          "/api/v1/namespaces", io.fabric8.mockwebserver.http.Headers.builder().build(),
          new Buffer(("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"" + namespace
              + "\"}}").getBytes(StandardCharsets.UTF_8))));
    }
  }

  public Authorizer authorizer() {
    return authorizer;
  }

  public Faults faults() {
    return faults;
  }

  public long currentResourceVersion() {
    return currentResourceVersion;
  }

  public List<RecordedWrite> writes() {
    return List.copyOf(writes);
  }

  public long requestCount(Verb verb, String resource) {
    java.util.concurrent.atomic.LongAdder count = requests.get(verb + " " + resource);
    return count == null ? 0 : count.sum();
  }

  public void clearWrites() {
    writes.clear();
  }

  /** Starts the timer that sends bookmarks and ends watches at their timeout. */
  public synchronized void start() {
    if (timer == null) {
      timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "embedded-apiserver-timer");
        t.setDaemon(true);
        return t;
      });
      long period = bookmarkInterval.toMillis();
      timer.scheduleAtFixedRate(this::sendBookmarks, period, period, TimeUnit.MILLISECONDS);
    }
  }

  /** Ends every watch and stops the timer; stored objects stay. */
  public synchronized void stop() {
    cutWatches();
    if (timer != null) {
      timer.shutdownNow();
      timer = null;
    }
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
    requests.computeIfAbsent(info.verb() + " " + info.resource(), k -> new java.util.concurrent.atomic.LongAdder())
        .increment();
    // as in the API server, authentication and authorization come before anything else
    MockResponse response = authorizer.check(request);
    if (response == null && PodLogProxy.handles(access)) {
      return podLogs.answer(request, access); // pods/log goes on to the pod's node, as in kube-apiserver
    }
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
  private static boolean allowed(io.fabric8.mockwebserver.dsl.HttpMethod method, Access access) {
    boolean named = !access.path().matches(".*/" + java.util.regex.Pattern.quote(access.resource()) + "/?$");
    return switch (method) {
      case POST -> !named;
      case PUT, PATCH -> named;
      default -> true;
    };
  }

  /**
   * Observations as JSON, for tests whose code runs in another process, such as a forked OSGi framework:
   * {@code GET /nodelet-testing/watches?resource=configmaps[&fieldSelector=...]} gives the open watches
   * ({@code {"count":N}}), {@code /nodelet-testing/writes} the recorded writes and {@code /nodelet-testing/denied}
   * the denied requests (arrays of the records' fields). No token is needed: this is the test's view, not the API.
   */
  private MockResponse observe(RecordedRequest request) {
    io.fabric8.mockwebserver.http.HttpUrl url = io.fabric8.mockwebserver.http.HttpUrl.parse("http://localhost"
        + request.getPath());
    String what = url.uri().getRawPath().substring(OBSERVE_PATH.length());
    String resource = url.queryParameter("resource");
    String body;
    if (what.equals("watches") && resource != null) {
      body = "{\"count\":" + openWatches(resource, url.queryParameter("fieldSelector")) + "}";
    } else if (what.equals("writes")) {
      body = Serialization.asJson(writes());
    } else if (what.equals("denied")) {
      body = Serialization.asJson(authorizer.denied());
    } else {
      return Status.response(404, "unknown observation: " + request.getPath());
    }
    return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json").setBody(body);
  }

  private MockResponse route(RecordedRequest request, RequestInfo info, Resource resource) {
    switch (info.verb()) {
      case WATCH:
        return watch(request, info, resource);
      case LIST:
        return list(request, info, resource);
      case CREATE:
      case UPDATE:
      case PATCH:
        synchronized (writeMonitor) {
          try {
            return write(request, info, resource);
          } catch (Admission.Rejected e) {
            return Status.invalid(e.code, e.getMessage(), resource, info.name(), e.causes);
          } finally {
            dryRun = false;
            lastStored = null;
            updateManager = null;
          }
        }
      case DELETE:
        synchronized (writeMonitor) {
          try {
            return delete(request, info, resource);
          } finally {
            dryRun = false;
            lastStored = null;
          }
        }
      case DELETECOLLECTION:
        return deleteCollection(request, info);
      default:
        MockResponse found = handleGet(request.getPath());
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
  }

  /**
   * A create, update or patch: the body checked and completed as the API server does, then stored by the stock
   * handler (an update, for a patch), whose resourceVersion and conflict checks apply.
   */
  private MockResponse write(RecordedRequest request, RequestInfo info, Resource resource) {
    String contentType = Objects.requireNonNullElse(request.getHeader("Content-Type"), "application/json");
    String mediaType = contentType.split(";")[0].trim().toLowerCase(java.util.Locale.ROOT);
    dryRun = DryRun.requested(info, null);
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
      synchronized (eventLock) {
        current = findResource(extractor.fromPath(rawPath));
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
        if (otherUid != null) return otherUid;
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
    updateManager = mediaType.equals("application/apply-patch+yaml") ? null
        : ManagedFields.manager(info.param("fieldManager"), request.getHeader("User-Agent"));
    RecordedRequest forward = new RecordedRequest(request.getHttpVersion(),
        creating ? io.fabric8.mockwebserver.dsl.HttpMethod.POST : io.fabric8.mockwebserver.dsl.HttpMethod.PUT,
        path, request.getHeaders(), new Buffer(Serialization.asJson(object).getBytes(StandardCharsets.UTF_8)));
    MockResponse response = creating ? handleCreate(withGeneratedName(forward, info)) : handleUpdate(forward);
    if (response.code() == 409) {
      String name = info.name() != null ? info.name() : object.path("metadata").path("name").asText();
      return creating ? Status.alreadyExists(resource, name) : Status.conflict(resource, name);
    }
    if (response.code() == 404) {
      return Status.notFound(resource, info.name());
    }
    if (response.code() < 300 && lastStored != null) {
      response = new MockResponse().setResponseCode(creating ? 201 : 200)
          .setHeader("Content-Type", "application/json").setBody(dryRun ? DryRun.answer(lastStored, creating ? null
              : Json.read(findResource(extractor.fromPath(rawPath)).getValue()).path("metadata")
              .path("resourceVersion").asText()) : lastStored);
    }
    for (String warning : warnings) {
      response.addHeader("Warning", "299 - \"" + warning.replace("\"", "\\\"") + "\"");
    }
    return response;
  }

  /** A delete: 200 with a Success Status (pods: the object) when gone, 202 with the object when finalizers hold it. */
  private MockResponse delete(RecordedRequest request, RequestInfo info, Resource resource) {
    JsonNode options = readJson(request);
    dryRun = DryRun.requested(info, options);
    Map.Entry<AttributeSet, String> current = findResource(extractor.fromPath(info.url().uri().getRawPath()));
    MockResponse failed = current == null ? null : DeleteOptions.preconditionFailure(options, current.getValue());
    if (failed != null) {
      return failed;
    }
    MockResponse graceful = current == null || !resource.plural().equals("pods") ? null : GracefulDeletion.pending(
        Json.read(current.getValue()), options, info, m -> markForDeletion(info.url().uri().getRawPath(), current, m));
    if (graceful != null) {
      return graceful;
    }
    MockResponse response = handleDelete(request.getPath());
    if (response.code() == 404) {
      return Status.notFound(resource, info.name());
    }
    if (response.code() >= 300) {
      return response;
    }
    if (lastStored != null) { // still there: finalizers pending
      return new MockResponse().setResponseCode(202).setHeader("Content-Type", "application/json")
          .setBody(lastStored);
    }
    String deleted = response.getBody() == null ? "{}" : response.getBody().readUtf8();
    DELETED.set(deleted);
    if (resource.plural().equals("pods")) {
      return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json")
          .setBody(deleted);
    }
    return Status.success(resource, info.name(), Json.read(deleted).path("metadata").path("uid").asText(null));
  }

  /** Stores a pod marked for graceful deletion with the next resourceVersion (a MODIFIED event); what it stored. */
  private String markForDeletion(String path, Map.Entry<AttributeSet, String> current, String marked) {
    ObjectNode pod = (ObjectNode) Json.read(marked);
    pod.with("metadata").put("resourceVersion", String.valueOf(requestResourceVersion()));
    processEvent(path, extractor.fromPath(path), current.getKey(), null, pod.toString());
    return lastStored;
  }

  /** The query of a list or watch: the stock path and label attributes, with field selectors parsed here. */
  private AttributeSet query(RequestInfo info) {
    AttributeSet stock = extractor.fromPath(info.url().uri().getRawPath() + labelSelectorOnly(info));
    return AttributeSet.merge(stock, Fields.parse(info.resource(), info.param("fieldSelector")));
  }

  private static String labelSelectorOnly(RequestInfo info) {
    String labels = info.param("labelSelector");
    return labels == null ? "" : "?labelSelector=" + java.net.URLEncoder.encode(labels, StandardCharsets.UTF_8);
  }

  private MockResponse list(RecordedRequest request, RequestInfo info, Resource resource) {
    AttributeSet query = query(info);
    java.util.TreeMap<String, String> items = new java.util.TreeMap<>(); // by key, as etcd orders them
    long resourceVersion;
    synchronized (eventLock) {
      map.forEach((attributes, object) -> {
        if (attributes.matches(query)) {
          items.put(keyOf(attributes), object);
        }
      });
      resourceVersion = currentResourceVersion;
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

  private MockResponse deleteCollection(RecordedRequest request, RequestInfo info) {
    AttributeSet query = query(info);
    List<String> deleted = new ArrayList<>();
    synchronized (writeMonitor) {
      dryRun = DryRun.requested(info, readJson(request));
      List<String> paths = new ArrayList<>();
      synchronized (eventLock) {
        map.forEach((attributes, object) -> {
          if (attributes.matches(query)) {
            paths.add(objectPath(info, Serialization.unmarshal(object, GenericKubernetesResource.class)));
          }
        });
      }
      for (String path : paths) {
        MockResponse r = handleDelete(path);
        if (r.code() < 300 && r.getBody() != null) {
          deleted.add(r.getBody().readUtf8());
        }
      }
      dryRun = false;
    }
    return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json")
        .setBody(((io.fabric8.kubernetes.client.server.mock.KubernetesResponseComposer) responseComposer)
            .compose(deleted, String.valueOf(currentResourceVersion)));
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
    String namespace = info.namespace();
    String candidate;
    do {
      StringBuilder sb = new StringBuilder(prefix);
      for (int i = 0; i < 5; i++) {
        sb.append(NAME_CHARS.charAt(RANDOM.nextInt(NAME_CHARS.length())));
      }
      candidate = sb.toString();
    } while (exists(info, namespace, candidate));
    metadata.put("name", candidate);
    return new RecordedRequest(request.getHttpVersion(), request.method(), request.getPath(), request.getHeaders(),
        new Buffer(Serialization.asJson(body).getBytes(StandardCharsets.UTF_8)));
  }

  private boolean exists(RequestInfo info, String namespace, String name) {
    AttributeSet key = extractor.fromPath(info.url().uri().getRawPath())
        .add(new Attribute(KubernetesAttributesExtractor.NAME, name));
    synchronized (eventLock) {
      return map.keySet().stream().anyMatch(k -> k.matches(key));
    }
  }

  private static JsonNode readJson(RecordedRequest request) {
    return readJson(request, "application/json");
  }

  /** The body of a request as JSON (YAML too, as the API server accepts it); 415 for another format. */
  private static JsonNode readJson(RecordedRequest request, String mediaType) {
    byte[] body = request.getBody() == null ? new byte[0] : request.getBody().getBytes();
    if (body.length == 0) {
      return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
    }
    boolean yaml = mediaType.endsWith("yaml");
    if (!yaml && !mediaType.endsWith("json")) {
      throw new Admission.Rejected(415, "the body of the request was in an unknown format - accepted media types "
          + "include: application/json, application/yaml, application/vnd.kubernetes.protobuf", List.of());
    }
    try {
      return yaml ? Serialization.yamlMapper().readTree(body) : Serialization.jsonMapper().readTree(body);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("the request body is not valid " + (yaml ? "YAML" : "JSON") + ": "
          + e.getMessage());
    }
  }

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

  /** A dry run gives out no resourceVersion: the one it shows is the next, which the next write takes. */
  @Override
  public long requestResourceVersion() {
    return dryRun ? resourceVersions.get() + 1 : resourceVersions.incrementAndGet();
  }

  // ---- the event stream ----

  @Override
  public void processEvent(String path, AttributeSet pathAttributes, AttributeSet oldAttributes,
      GenericKubernetesResource resource, String newState) {
    if (newState != null) {
      newState = completed(path, oldAttributes, newState);
      lastStored = newState;
    }
    if (dryRun) {
      return;
    }
    synchronized (eventLock) {
      String existing = oldAttributes == null ? null : map.remove(oldAttributes);
      if (oldAttributes != null) {
        unindex(oldAttributes);
      }
      AttributeSet newAttributes = null;
      GenericKubernetesResource stored = null;
      if (newState != null) {
        stored = Serialization.unmarshal(newState, GenericKubernetesResource.class);
        newAttributes = attributesOf(stored, pathAttributes);
        map.put(newAttributes, newState);
        index(stored.getMetadata().getName(), newAttributes);
      }
      if (Objects.equals(existing, newState)) {
        return;
      }
      long resourceVersion;
      String object;
      String name;
      if (stored != null) {
        resourceVersion = Long.parseLong(stored.getMetadata().getResourceVersion());
        name = stored.getMetadata().getName();
      } else {
        // a deletion is an event of its own with the next resourceVersion, carried by the deleted object
        resourceVersion = requestResourceVersion();
        GenericKubernetesResource deleted = Serialization.unmarshal(existing, GenericKubernetesResource.class);
        deleted.getMetadata().setResourceVersion(String.valueOf(resourceVersion));
        name = deleted.getMetadata().getName();
        newState = Serialization.asJson(deleted);
      }
      object = newState;
      Event event = new Event(resourceVersion, name, oldAttributes, newAttributes, object);
      history.addLast(event);
      while (history.size() > historySize) {
        compactedResourceVersion = history.removeFirst().resourceVersion();
      }
      currentResourceVersion = Math.max(currentResourceVersion, resourceVersion);
      deliver(unnamedWatches, event);
      deliver(watchesByName.getOrDefault(name, Set.of()), event);
    }
  }

  private void deliver(Set<WatchSession> sessions, Event event) {
    for (WatchSession session : sessions) {
      deliver(session, event);
      if (session.isClosed()) {
        close(session); // its client went away while we wrote to it
      }
    }
  }

  /** A get of one object by its name reads the name index, as the API server reads one key; the rest walk. */
  @Override
  public MockResponse handleGet(String path) {
    AttributeSet query = extractor.fromPath(path);
    if (queriedName(query) == null) {
      return super.handleGet(path);
    }
    Map.Entry<AttributeSet, String> found = findResource(query);
    return found == null ? new MockResponse().setResponseCode(404)
        : new MockResponse().setResponseCode(200).setBody(found.getValue());
  }

  /** The lookup of one object (the stock update and patch, this class's checks); by name where the query has one. */
  @Override
  public Map.Entry<AttributeSet, String> findResource(AttributeSet query) {
    String name = queriedName(query);
    if (name == null) {
      return super.findResource(query);
    }
    synchronized (eventLock) {
      for (AttributeSet candidate : byName.getOrDefault(name, Set.of())) {
        String object = candidate.matches(query) ? map.get(candidate) : null;
        if (object != null) {
          return Map.entry(candidate, object);
        }
      }
      return null;
    }
  }

  /** The one name a query requires, or null. */
  private static String queriedName(AttributeSet query) {
    Attribute name = query.getAttribute(KubernetesAttributesExtractor.NAME);
    return name != null && name.getType() == AttributeType.WITH && name.getValues().size() == 1
        ? name.getValues().get(0).toString() : null;
  }

  private void index(String name, AttributeSet attributes) {
    if (name != null) {
      byName.computeIfAbsent(name, n -> new HashSet<>()).add(attributes);
      nameOf.put(attributes, name);
    }
  }

  private void unindex(AttributeSet attributes) {
    String name = nameOf.remove(attributes);
    Set<AttributeSet> named = name == null ? null : byName.get(name);
    if (named != null && named.remove(attributes) && named.isEmpty()) {
      byName.remove(name);
    }
  }

  /** As the stock handlers, for objects that have no generation (the stock one assumes they all have one). */
  @Override
  public void preserveMetadata(JsonNode currentResource, JsonNode updatedResource) {
    JsonNode current = currentResource.path("metadata");
    ObjectNode updated = ((ObjectNode) updatedResource).with("metadata");
    updated.put("namespace", current.path("namespace").asText(null));
    for (String field : List.of("uid", "creationTimestamp", "resourceVersion", "generation")) {
      if (current.has(field)) {
        updated.set(field, current.get(field).deepCopy());
      } else {
        updated.remove(field);
      }
    }
  }

  /** The object as the API server would store it: see {@link Admission#defaults}. */
  private String completed(String path, AttributeSet oldAttributes, String newState) {
    Access access = Access.of(io.fabric8.mockwebserver.dsl.HttpMethod.GET, path);
    Resource resource = Resources.find(access.apiVersion(), access.resource()).orElse(null);
    if (resource == null || !(Json.read(newState) instanceof ObjectNode object)) {
      return newState;
    }
    String previous;
    synchronized (eventLock) {
      previous = oldAttributes == null ? null : map.get(oldAttributes);
    }
    JsonNode before = previous == null ? null : Json.read(previous);
    JsonNode sentManagedFields = object.path("metadata").get("managedFields"); // before defaults drop an empty one
    Admission.dropDisabledFields(resource, before, object, disabledFeatureGates);
    Admission.defaults(resource, before, object);
    if (updateManager != null) {
      ManagedFields.recordUpdate(resource, access.subresource(), before, object, sentManagedFields, updateManager);
    }
    return object.toString();
  }

  private AttributeSet attributesOf(GenericKubernetesResource object, AttributeSet pathAttributes) {
    AttributeSet attributes = extractor.extract(object);
    // the plural, group and version come from the path (the stock dispatcher does the same)
    attributes = AttributeSet.merge(pathAttributes, attributes);
    String resource = String.valueOf(pathAttributes.getAttribute(KubernetesAttributesExtractor.PLURAL)
        .getValues().iterator().next());
    return AttributeSet.merge(attributes, Fields.attributes(resource, object));
  }

  private static void deliver(WatchSession session, Event event) {
    if (session.resumeAfter != null && event.resourceVersion() <= session.resumeAfter
        || !session.selectedName.isEmpty() && !session.selectedName.equals(event.name())) {
      return;
    }
    boolean before = session.selects(event.oldAttributes());
    boolean after = session.selects(event.newAttributes());
    if (before && after) {
      session.send("MODIFIED", event.object());
    } else if (before) {
      session.send("DELETED", event.object());
    } else if (after) {
      session.send("ADDED", event.object());
    }
  }

  private MockResponse watch(RecordedRequest request, RequestInfo info, Resource resource) {
    String rv = Objects.requireNonNullElse(info.param("resourceVersion"), "");
    boolean sendInitialEvents = "true".equals(info.param("sendInitialEvents"));
    boolean bookmarks = "true".equals(info.param("allowWatchBookmarks"));
    if (sendInitialEvents) {
      if (!"NotOlderThan".equals(info.param("resourceVersionMatch"))) {
        return Status.response(422, "resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
            + "resourceVersionMatch to NotOlderThan");
      }
      if (!bookmarks) {
        return Status.response(422, "allowWatchBookmarks: Forbidden: sendInitialEvents requires setting "
            + "allowWatchBookmarks to true");
      }
    }
    Long resumeAfter = null;
    if (!sendInitialEvents && !rv.isEmpty() && !"0".equals(rv)) {
      try {
        resumeAfter = Long.parseLong(rv);
      } catch (NumberFormatException e) {
        return Status.response(400, "invalid resource version: \"" + rv + "\"");
      }
    }
    long timeout = 0;
    if (info.param("timeoutSeconds") != null) {
      timeout = Long.parseLong(info.param("timeoutSeconds"));
    }
    WatchSession session = new WatchSession(info, query(info), info.param("fieldSelector"), resumeAfter,
        sendInitialEvents, bookmarks, timeout);
    if (Tables.wanted(request.getHeader("Accept"))) {
      java.util.concurrent.atomic.AtomicBoolean first = new java.util.concurrent.atomic.AtomicBoolean(true);
      String include = info.param("includeObject");
      session.encodeWith(object -> Tables.of(resource, List.of(Json.read(object)), Json.read(object)
          .path("metadata").path("resourceVersion").asText(null), include, first.getAndSet(false)).toString());
    }
    return new MockResponse().withWebSocketUpgrade(new WebSocketWatch(session, this));
  }

  /** Starts a session whose transport is ready: the initial state or the missed events, then live events. */
  void open(WatchSession session) {
    synchronized (eventLock) {
      if (session.resumeAfter != null) {
        if (session.resumeAfter < compactedResourceVersion) {
          session.send("ERROR", Status.json(410, "too old resource version: " + session.resumeAfter + " ("
              + compactedResourceVersion + ")"));
          session.close();
          return;
        }
        for (Event event : history) {
          deliver(session, event);
        }
      } else {
        if (session.selectedName.isEmpty()) {
          map.forEach((attributes, object) -> {
            if (session.selects(attributes)) {
              session.send("ADDED", object);
            }
          });
        } else {
          for (AttributeSet attributes : byName.getOrDefault(session.selectedName, Set.of())) {
            String object = map.get(attributes);
            if (object != null && session.selects(attributes)) {
              session.send("ADDED", object);
            }
          }
        }
        if (session.sendInitialEvents) {
          session.send("BOOKMARK", bookmark(session, true));
        }
      }
      watches.add(session);
      if (session.selectedName.isEmpty()) {
        unnamedWatches.add(session);
      } else {
        watchesByName.compute(session.selectedName, (n, named) -> {
          Set<WatchSession> sessions = named == null ? ConcurrentHashMap.newKeySet() : named;
          sessions.add(session);
          return sessions;
        });
      }
    }
    LOG.debug("watch opened: {} {} fieldSelector={}", session.request.resource(),
        session.request.namespace(), session.fieldSelector);
    ScheduledExecutorService t = timer;
    if (session.timeoutSeconds > 0 && t != null) {
      t.schedule(() -> close(session), session.timeoutSeconds, TimeUnit.SECONDS);
    }
  }

  /** Ends a session (from the server side, or after its transport closed). */
  void close(WatchSession session) {
    if (watches.remove(session)) {
      if (session.selectedName.isEmpty()) {
        unnamedWatches.remove(session);
      } else {
        watchesByName.computeIfPresent(session.selectedName,
            (n, named) -> named.remove(session) && named.isEmpty() ? null : named);
      }
    }
    session.close();
  }

  private String bookmark(WatchSession session, boolean initialEventsEnd) {
    long rv = Math.max(currentResourceVersion, session.resumeAfter == null ? 0 : session.resumeAfter);
    String kind = Resources.find(session.request.apiVersion(), session.request.resource()).map(Resource::kind)
        .orElse("Unknown");
    String annotations = initialEventsEnd ? ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}" : "";
    return "{\"kind\":\"" + kind + "\",\"apiVersion\":\"" + session.request.apiVersion()
        + "\",\"metadata\":{\"resourceVersion\":\"" + rv + "\"" + annotations + "}}";
  }

  private void sendBookmarks() {
    synchronized (eventLock) {
      for (WatchSession session : watches) {
        if (session.bookmarks) {
          session.send("BOOKMARK", bookmark(session, false));
        }
      }
    }
  }

  public void cutWatches() {
    for (WatchSession session : List.copyOf(watches)) {
      close(session);
    }
  }

  public int openWatches(String resource, String fieldSelector) {
    return (int) watches.stream()
        .filter(s -> !s.isClosed() && s.request.resource().equals(resource))
        .filter(s -> fieldSelector == null || fieldSelector.equals(s.fieldSelector))
        .count();
  }

  /** The session a watch response would open, when the front end serves it over HTTP instead of WebSocket. */
  static WatchSession sessionOf(MockResponse response) {
    return response.getWebSocketListener() instanceof WebSocketWatch w ? w.session() : null;
  }
}
