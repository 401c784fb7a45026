package dev.nodelet.testing.apiserver.internal;

import dev.nodelet.testing.apiserver.RecordedWrite;
import dev.nodelet.testing.apiserver.Verb;
import dev.nodelet.testing.apiserver.internal.Resources.Resource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.HttpUrl;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The API server's request handling: authorization, discovery, then each resource request routed to its verb
 * ({@link Reads}, {@link Writes}, {@link Watches}) over the {@link ObjectStore}, with injected faults and delays, the
 * write record and the default Status of a failure without a body.
 */
public final class ApiServerDispatcher extends Dispatcher {

  private static final Logger LOG = LoggerFactory.getLogger(ApiServerDispatcher.class);

  /** The feature gates a server can be built without. */
  public static final Set<String> FEATURE_GATES = Admission.FEATURE_GATE_FIELDS.keySet();

  private final ObjectStore store;
  private final Watches watches;
  private final Reads reads;
  private final Writes writes;
  private final Faults faults = new Faults();
  private final Authorizer authorizer;

  public ApiServerDispatcher(int historySize, Duration bookmarkInterval, Authorizer authorizer,
      boolean validateNames, Set<String> disabledFeatureGates) {
    this.authorizer = authorizer;
    this.store = new ObjectStore(disabledFeatureGates);
    this.watches = new Watches(store, historySize, bookmarkInterval);
    store.onChange(watches::changed);
    this.reads = new Reads(store);
    this.writes = new Writes(store, validateNames);
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
    return List.copyOf(recorded);
  }

  public long requestCount(Verb verb, String resource) {
    LongAdder count = requests.get(verb + " " + resource);
    return count == null ? 0 : count.sum();
  }

  public void clearWrites() {
    recorded.clear();
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
      case LIST -> reads.list(request, info, resource);
      case CREATE, UPDATE, PATCH -> writes.write(request, info, resource);
      case DELETE -> writes.delete(request, info, resource);
      case DELETECOLLECTION -> writes.deleteCollection(request, info);
      default -> reads.get(request, info, resource);
    };
  }


  private static final String OBSERVE_PATH = "/nodelet-testing/";

  /** The object the delete on this thread removed, for the write record: the answer is a Status. */
  private static final ThreadLocal<String> DELETED = new ThreadLocal<>();

  private final List<RecordedWrite> recorded = new CopyOnWriteArrayList<>();
  private final Map<String, LongAdder> requests = new ConcurrentHashMap<>();


  /** Keeps the object a delete on this thread removed, for the record of that delete. */
  static void deleted(String object) {
    DELETED.set(object);
  }



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
    recorded.add(new RecordedWrite(info.verb(), info.resource(), namespace, name, nodeName, response.code()));
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
