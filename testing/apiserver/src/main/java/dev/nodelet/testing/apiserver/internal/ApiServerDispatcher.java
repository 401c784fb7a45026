package dev.nodelet.testing.apiserver.internal;

import dev.nodelet.testing.apiserver.RecordedWrite;
import dev.nodelet.testing.apiserver.Verb;
import dev.nodelet.testing.apiserver.internal.Resources.Resource;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
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
  private final Observations observations;
  private final Faults faults = new Faults();
  private final Authorizer authorizer;
  private final PodLogProxy podLogs;

  public ApiServerDispatcher(int historySize, Duration bookmarkInterval, Authorizer authorizer,
      boolean validateNames, Set<String> disabledFeatureGates) {
    this.authorizer = authorizer;
    this.store = new ObjectStore(disabledFeatureGates);
    this.watches = new Watches(store, historySize, bookmarkInterval);
    store.onChange(watches::changed);
    this.reads = new Reads(store);
    this.writes = new Writes(store, validateNames);
    this.observations = new Observations(watches, authorizer);
    this.podLogs = new PodLogProxy(store::handleGet);
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
    return observations.writes();
  }

  public long requestCount(Verb verb, String resource) {
    return observations.requestCount(verb, resource);
  }

  public void clearWrites() {
    observations.clearWrites();
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
    if (request.getPath().startsWith(Observations.PATH)) {
      return observations.answer(request);
    }
    Access access = Access.of(request.method(), request.getPath());
    if (!access.resourceRequest()) {
      MockResponse denied = authorizer.check(request);
      return denied != null ? denied : Discovery.answer(access.path(), request.getHeader("Host"),
          request.getHeader("Accept"));
    }
    RequestInfo info = RequestInfo.of(request);
    observations.counted(info);
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
      observations.record(info, request, response);
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
}
