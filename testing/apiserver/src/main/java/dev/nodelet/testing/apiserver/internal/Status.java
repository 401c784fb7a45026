package dev.nodelet.testing.apiserver.internal;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.MockResponse;

/** Kubernetes {@code Status} bodies, as the API server answers errors. */
final class Status {

  private Status() {
  }

  static String json(int code, String message) {
    return Serialization.asJson(new StatusBuilder()
        .withStatus("Failure")
        .withCode(code)
        .withReason(reason(code))
        .withMessage(message)
        .withNewMetadata().endMetadata()
        .build());
  }

  static MockResponse response(int code, String message) {
    return new MockResponse()
        .setResponseCode(code)
        .setHeader("Content-Type", "application/json")
        .setBody(json(code, message));
  }

  /** A 403 as the API server's authorization filter answers it, with the group, resource and name as details. */
  static MockResponse forbidden(String group, String resource, String name, String message) {
    return new MockResponse()
        .setResponseCode(403)
        .setHeader("Content-Type", "application/json")
        .setBody(Serialization.asJson(new StatusBuilder()
            .withStatus("Failure")
            .withCode(403)
            .withReason(reason(403))
            .withMessage(message)
            .withNewDetails().withGroup(group).withKind(resource).withName(name.isEmpty() ? null : name)
            .endDetails()
            .withNewMetadata().endMetadata()
            .build()));
  }

  static String reason(int code) {
    return switch (code) {
      case 400 -> "BadRequest";
      case 401 -> "Unauthorized";
      case 403 -> "Forbidden";
      case 404 -> "NotFound";
      case 405 -> "MethodNotAllowed";
      case 409 -> "Conflict";
      case 410 -> "Expired";
      case 422 -> "Invalid";
      case 429 -> "TooManyRequests";
      case 503 -> "ServiceUnavailable";
      case 504 -> "Timeout";
      default -> code >= 500 ? "InternalError" : "Unknown";
    };
  }
}
