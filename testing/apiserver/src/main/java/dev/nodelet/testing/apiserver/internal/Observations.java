package dev.nodelet.testing.apiserver.internal;

import dev.nodelet.testing.apiserver.RecordedWrite;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.HttpUrl;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a test observes of the server: the recorded writes, the request counts, and the same (with the open watches
 * and the denied requests) as JSON under {@link #PATH}, for tests whose code runs in another process.
 */
final class Observations {

  static final String PATH = "/nodelet-testing/";

  /** The object the delete on this thread removed, for the write record: the answer is a Status. */
  private static final ThreadLocal<String> DELETED = new ThreadLocal<>();

  private final Watches watches;
  private final Authorizer authorizer;
  private final List<RecordedWrite> writes = new CopyOnWriteArrayList<>();
  private final Map<String, LongAdder> requests = new ConcurrentHashMap<>();

  Observations(Watches watches, Authorizer authorizer) {
    this.watches = watches;
    this.authorizer = authorizer;
  }

  /** Keeps the object a delete on this thread removed, for the record of that delete. */
  static void deleted(String object) {
    DELETED.set(object);
  }

  List<RecordedWrite> writes() {
    return List.copyOf(writes);
  }

  void clearWrites() {
    writes.clear();
  }

  void counted(RequestInfo info) {
    requests.computeIfAbsent(info.verb() + " " + info.resource(), k -> new LongAdder()).increment();
  }

  long requestCount(Verb verb, String resource) {
    LongAdder count = requests.get(verb + " " + resource);
    return count == null ? 0 : count.sum();
  }

  /**
   * Observations as JSON, for tests whose code runs in another process, such as a forked OSGi framework:
   * {@code GET /nodelet-testing/watches?resource=configmaps[&fieldSelector=...]} gives the open watches
   * ({@code {"count":N}}), {@code /nodelet-testing/writes} the recorded writes and {@code /nodelet-testing/denied}
   * the denied requests (arrays of the records' fields). No token is needed: this is the test's view, not the API.
   */
  MockResponse answer(RecordedRequest request) {
    HttpUrl url = HttpUrl.parse("http://localhost" + request.getPath());
    String what = url.uri().getRawPath().substring(PATH.length());
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
  void record(RequestInfo info, RecordedRequest request, MockResponse response) {
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
