package dev.nodelet.kube.internal.watch;

import dev.nodelet.kube.watch.ReflectorException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.Map;

/**
 * How the API server's answers to lists and watches read: the message of a Status, the resourceVersion of an object
 * or list, the answers that refuse WatchList, the bookmark that ends a WatchList's initial events.
 */
final class ApiAnswers {

  static final String INITIAL_EVENTS_END = "k8s.io/initial-events-end";

  private ApiAnswers() {
  }

  /** The error of an answer that is not a 2xx: its status, and the message of its body when that is a Status. */
  static ReflectorException statusError(KubernetesSerialization json, String verb, String what, int status,
      String body) {
    String message = null;
    if (body != null && !body.isBlank()) {
      try {
        Map<?, ?> parsed = json.unmarshal(body, Map.class);
        message = parsed.get("message") instanceof String s ? s : null;
      } catch (RuntimeException e) {
        message = null; // not a Status: the code alone says what happened
      }
    }
    return new ReflectorException("cannot " + verb + " " + what + ": the API server answered " + status
        + (message == null ? "" : " (" + message + ")"), status, null);
  }

  /** The answers of a server that does not serve WatchList (an older server or the WatchList gate off). */
  static boolean refusesWatchList(int status) {
    return status == 400 || status == 422 || status == 415 || status == 501;
  }

  static String resourceVersionOf(Map<String, Object> object) {
    Object metadata = object.get("metadata");
    Object version = metadata instanceof Map<?, ?> m ? m.get("resourceVersion") : null;
    return version == null ? null : version.toString();
  }

  /** Whether a bookmark's object carries the annotation that ends a WatchList's initial events. */
  static boolean endsInitialEvents(Map<String, Object> bookmark) {
    Object metadata = bookmark.get("metadata");
    Object annotations = metadata instanceof Map<?, ?> m ? m.get("annotations") : null;
    return annotations instanceof Map<?, ?> a && "true".equals(a.get(INITIAL_EVENTS_END));
  }
}
