package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.mockwebserver.http.MockResponse;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.function.UnaryOperator;

/**
 * A pod's graceful deletion, as kube-apiserver's pod strategy and {@code rest.BeforeDelete} do it: a pod bound to a
 * node and not yet terminal is not removed by a delete but marked ({@code deletionTimestamp} = now + grace,
 * {@code deletionGracePeriodSeconds}), so that its node stops the containers first and then deletes it with grace 0.
 * The grace is the request's {@code gracePeriodSeconds} (query or DeleteOptions), else the pod's
 * {@code terminationGracePeriodSeconds}, else 30; a negative one counts as 1. A pod already marked may only get a
 * shorter grace; grace 0 removes it.
 */
final class GracefulDeletion {

  private static final long DEFAULT_GRACE = 30;

  private GracefulDeletion() {
  }

  /**
   * @param current the stored pod
   * @param options the request's DeleteOptions (missing when it sent none)
   * @param info the request
   * @param store stores the marked pod (a MODIFIED event with the next resourceVersion) and returns what it stored
   * @return the 200 answer with the pod when it stays (marked), or null when the delete removes it now
   */
  static MockResponse pending(JsonNode current, JsonNode options, RequestInfo info, UnaryOperator<String> store) {
    Long requested = requested(info, options);
    JsonNode metadata = current.path("metadata");
    if (metadata.hasNonNull("deletionTimestamp")) {
      if (!metadata.hasNonNull("deletionGracePeriodSeconds")) {
        return null;
      }
      long pending = metadata.path("deletionGracePeriodSeconds").asLong();
      if (requested == null || requested >= pending) {
        return answer(current.toString()); // graceful deletion pending: nothing changes
      }
      long grace = Math.max(requested, 0);
      if (grace == 0) {
        return null;
      }
      Instant shortened = Instant.parse(metadata.path("deletionTimestamp").asText()).minusSeconds(pending)
          .plusSeconds(grace);
      return answer(store.apply(marked(current, shortened, grace, false)));
    }
    String phase = current.path("status").path("phase").asText("");
    if (current.path("spec").path("nodeName").asText("").isEmpty() || phase.equals("Succeeded")
        || phase.equals("Failed")) {
      return null; // not scheduled or already terminal: nothing on a node to stop
    }
    long grace = requested != null ? requested
        : current.path("spec").path("terminationGracePeriodSeconds").asLong(DEFAULT_GRACE);
    if (grace < 0) {
      grace = 1;
    }
    if (grace == 0) {
      return null;
    }
    Instant at = Instant.now().truncatedTo(ChronoUnit.SECONDS).plusSeconds(grace);
    return answer(store.apply(marked(current, at, grace, true)));
  }

  /** The grace the request names, or null. */
  static Long requested(RequestInfo info, JsonNode options) {
    String query = info.param("gracePeriodSeconds");
    if (query != null && !query.isEmpty()) {
      try {
        return Long.parseLong(query);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("gracePeriodSeconds: Invalid value: \"" + query
            + "\": must be a whole number of seconds");
      }
    }
    JsonNode grace = options.path("gracePeriodSeconds");
    if (grace.isMissingNode() || grace.isNull()) {
      return null;
    }
    if (!grace.canConvertToLong() || !grace.isIntegralNumber()) {
      throw new IllegalArgumentException("gracePeriodSeconds: Invalid value: " + grace
          + ": must be a whole number of seconds");
    }
    return grace.asLong();
  }

  private static String marked(JsonNode current, Instant at, long grace, boolean first) {
    ObjectNode pod = current.deepCopy();
    ObjectNode metadata = pod.with("metadata");
    metadata.put("deletionTimestamp", at.toString());
    metadata.put("deletionGracePeriodSeconds", grace);
    if (first && metadata.path("generation").asLong(0) > 0) { // as BeforeDelete: controllers see the change
      metadata.put("generation", metadata.path("generation").asLong() + 1);
    }
    return pod.toString();
  }

  private static MockResponse answer(String pod) {
    return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json").setBody(pod);
  }
}
