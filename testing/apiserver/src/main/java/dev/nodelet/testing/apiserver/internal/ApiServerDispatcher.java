package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.nodelet.testing.apiserver.RecordedWrite;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.server.mock.KubernetesAttributesExtractor;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.crud.Attribute;
import io.fabric8.mockwebserver.crud.AttributeSet;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
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
  private static final Map<String, String> KNOWN_KINDS = Map.of(
      "pods", "Pod", "configmaps", "ConfigMap", "secrets", "Secret", "nodes", "Node", "namespaces", "Namespace",
      "resourceslices", "ResourceSlice", "services", "Service", "events", "Event", "leases", "Lease");

  private record Event(long resourceVersion, AttributeSet oldAttributes, AttributeSet newAttributes,
      String object) {
  }

  private final int historySize;
  private final Duration bookmarkInterval;
  private final Object writeMonitor = new Object();
  private final Object eventLock = new Object();
  private final ArrayDeque<Event> history = new ArrayDeque<>(); // guarded by eventLock
  private long compactedResourceVersion; // guarded by eventLock: events up to here are gone
  private volatile long currentResourceVersion;
  private final Set<WatchSession> watches = ConcurrentHashMap.newKeySet();
  private final Map<String, String> kinds = new ConcurrentHashMap<>(KNOWN_KINDS);
  private final KubernetesAttributesExtractor extractor = new KubernetesAttributesExtractor();
  private final Faults faults = new Faults();
  private final Authorizer authorizer;
  private final List<RecordedWrite> writes = new CopyOnWriteArrayList<>();
  private final Map<String, java.util.concurrent.atomic.LongAdder> requests = new ConcurrentHashMap<>();
  private volatile ScheduledExecutorService timer;

  public ApiServerDispatcher(int historySize, Duration bookmarkInterval, Authorizer authorizer) {
    this.historySize = historySize;
    this.bookmarkInterval = bookmarkInterval;
    this.authorizer = authorizer;
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
    RequestInfo info = RequestInfo.of(request);
    requests.computeIfAbsent(info.verb() + " " + info.resource(), k -> new java.util.concurrent.atomic.LongAdder())
        .increment();
    // as in the API server, authentication and authorization come before anything else
    MockResponse response = authorizer.check(request);
    if (response == null) {
      OptionalInt injected = faults.take(info.verb(), info.resource());
      if (injected.isPresent()) {
        response = Status.response(injected.getAsInt(), "injected failure of " + info.verb() + " "
            + info.resource());
      } else {
        try {
          response = route(request, info);
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
    Duration delay = faults.delay();
    return delay.isZero() ? response : response.setBodyDelay(delay);
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

  private MockResponse route(RecordedRequest request, RequestInfo info) {
    switch (info.verb()) {
      case WATCH:
        return watch(info);
      case LIST:
        return list(info);
      case CREATE:
        synchronized (writeMonitor) {
          return handleCreate(withGeneratedName(request, info));
        }
      case UPDATE:
        synchronized (writeMonitor) {
          return handleUpdate(request);
        }
      case PATCH:
        synchronized (writeMonitor) {
          return handlePatch(request);
        }
      case DELETE:
        synchronized (writeMonitor) {
          MockResponse failed = checkPreconditions(request, info);
          return failed != null ? failed : handleDelete(request.getPath());
        }
      case DELETECOLLECTION:
        return deleteCollection(info);
      default:
        return handleGet(request.getPath());
    }
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

  private MockResponse list(RequestInfo info) {
    AttributeSet query = query(info);
    List<String> items = new ArrayList<>();
    long resourceVersion;
    synchronized (eventLock) {
      map.forEach((attributes, object) -> {
        if (attributes.matches(query)) {
          items.add(object);
        }
      });
      resourceVersion = currentResourceVersion;
    }
    return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json")
        .setBody(((io.fabric8.kubernetes.client.server.mock.KubernetesResponseComposer) responseComposer)
            .compose(items, String.valueOf(resourceVersion)));
  }

  private MockResponse deleteCollection(RequestInfo info) {
    AttributeSet query = query(info);
    List<String> deleted = new ArrayList<>();
    synchronized (writeMonitor) {
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

  /** Enforces the uid and resourceVersion preconditions of a delete's DeleteOptions; null when they hold. */
  private MockResponse checkPreconditions(RecordedRequest request, RequestInfo info) {
    JsonNode preconditions = readJson(request).path("preconditions");
    if (preconditions.isMissingNode() || preconditions.isNull()) {
      return null;
    }
    Map.Entry<AttributeSet, String> current;
    synchronized (eventLock) {
      current = findResource(extractor.fromPath(info.url().uri().getRawPath()));
    }
    if (current == null) {
      return null; // the stock handler answers 404
    }
    GenericKubernetesResource object = Serialization.unmarshal(current.getValue(), GenericKubernetesResource.class);
    String uid = preconditions.path("uid").asText("");
    if (!uid.isEmpty() && !uid.equals(object.getMetadata().getUid())) {
      return Status.response(409, "Precondition failed: UID in precondition: " + uid + ", UID in object meta: "
          + object.getMetadata().getUid());
    }
    String rv = preconditions.path("resourceVersion").asText("");
    if (!rv.isEmpty() && !rv.equals(object.getMetadata().getResourceVersion())) {
      return Status.response(409, "Precondition failed: ResourceVersion in precondition: " + rv
          + ", ResourceVersion in object meta: " + object.getMetadata().getResourceVersion());
    }
    return null;
  }

  private static JsonNode readJson(RecordedRequest request) {
    byte[] body = request.getBody() == null ? new byte[0] : request.getBody().getBytes();
    if (body.length == 0) {
      return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
    }
    try {
      return Serialization.jsonMapper().readTree(body);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("request body is not valid JSON: " + e.getMessage());
    }
  }

  private void record(RequestInfo info, RecordedRequest request, MockResponse response) {
    String name = info.name();
    String nodeName = null;
    String namespace = info.namespace();
    GenericKubernetesResource object = null;
    if (response.code() < 300 && response.getBody() != null && response.getBody().size() > 0
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

  // ---- the event stream ----

  @Override
  public void processEvent(String path, AttributeSet pathAttributes, AttributeSet oldAttributes,
      GenericKubernetesResource resource, String newState) {
    synchronized (eventLock) {
      String existing = oldAttributes == null ? null : map.remove(oldAttributes);
      AttributeSet newAttributes = null;
      GenericKubernetesResource stored = null;
      if (newState != null) {
        stored = Serialization.unmarshal(newState, GenericKubernetesResource.class);
        newAttributes = attributesOf(stored, pathAttributes);
        map.put(newAttributes, newState);
      }
      if (Objects.equals(existing, newState)) {
        return;
      }
      long resourceVersion;
      String object;
      if (stored != null) {
        resourceVersion = Long.parseLong(stored.getMetadata().getResourceVersion());
      } else {
        // a deletion is an event of its own with the next resourceVersion, carried by the deleted object
        resourceVersion = requestResourceVersion();
        GenericKubernetesResource deleted = Serialization.unmarshal(existing, GenericKubernetesResource.class);
        deleted.getMetadata().setResourceVersion(String.valueOf(resourceVersion));
        newState = Serialization.asJson(deleted);
      }
      object = newState;
      Event event = new Event(resourceVersion, oldAttributes, newAttributes, object);
      history.addLast(event);
      while (history.size() > historySize) {
        compactedResourceVersion = history.removeFirst().resourceVersion();
      }
      currentResourceVersion = Math.max(currentResourceVersion, resourceVersion);
      for (WatchSession session : watches) {
        deliver(session, event);
        if (session.isClosed()) {
          watches.remove(session); // its client went away while we wrote to it
        }
      }
    }
  }

  private AttributeSet attributesOf(GenericKubernetesResource object, AttributeSet pathAttributes) {
    AttributeSet attributes = extractor.extract(object);
    // the plural, group and version come from the path (the stock dispatcher does the same)
    attributes = AttributeSet.merge(pathAttributes, attributes);
    String resource = String.valueOf(pathAttributes.getAttribute(KubernetesAttributesExtractor.PLURAL)
        .getValues().iterator().next());
    if (object.getKind() != null) {
      kinds.putIfAbsent(resource, object.getKind());
    }
    return AttributeSet.merge(attributes, Fields.attributes(resource, object));
  }

  private static void deliver(WatchSession session, Event event) {
    if (session.resumeAfter != null && event.resourceVersion() <= session.resumeAfter) {
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

  private MockResponse watch(RequestInfo info) {
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
        map.forEach((attributes, object) -> {
          if (session.selects(attributes)) {
            session.send("ADDED", object);
          }
        });
        if (session.sendInitialEvents) {
          session.send("BOOKMARK", bookmark(session, true));
        }
      }
      watches.add(session);
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
    watches.remove(session);
    session.close();
  }

  private String bookmark(WatchSession session, boolean initialEventsEnd) {
    long rv = Math.max(currentResourceVersion, session.resumeAfter == null ? 0 : session.resumeAfter);
    String kind = kinds.getOrDefault(session.request.resource(), "Unknown");
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
