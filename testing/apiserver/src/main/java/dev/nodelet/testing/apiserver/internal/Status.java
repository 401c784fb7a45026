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

  /** A refused write: 422 Invalid with causes, 409 for apply conflicts, 400, 415. */
  static MockResponse invalid(int code, String message, Resources.Resource resource, String name,
      java.util.List<String[]> causes) {
    io.fabric8.kubernetes.api.model.StatusDetailsBuilder details = new io.fabric8.kubernetes.api.model
        .StatusDetailsBuilder().withName(name).withGroup(emptyToNull(resource.group()))
        .withKind(code == 422 ? resource.kind() : resource.plural());
    for (String[] cause : causes) {
      details.addNewCause().withReason(cause[0]).withField(cause[1]).withMessage(cause[2]).endCause();
    }
    return respond(code, new StatusBuilder().withStatus("Failure").withCode(code).withReason(reason(code))
        .withMessage(message).withDetails(code == 400 || code == 415 ? null : details.build())
        .withNewMetadata().endMetadata().build());
  }

  static MockResponse notFound(Resources.Resource resource, String name) {
    return withDetails(404, resource.plural() + qualifier(resource) + " \"" + name + "\" not found", resource,
        name, null);
  }

  static MockResponse alreadyExists(Resources.Resource resource, String name) {
    MockResponse r = withDetails(409, resource.plural() + qualifier(resource) + " \"" + name
        + "\" already exists", resource, name, null);
    return r.setBody(r.getBody().readUtf8().replace("\"reason\":\"Conflict\"", "\"reason\":\"AlreadyExists\""));
  }

  static MockResponse conflict(Resources.Resource resource, String name) {
    return withDetails(409, "Operation cannot be fulfilled on " + resource.plural() + qualifier(resource) + " \""
        + name + "\": the object has been modified; please apply your changes to the latest version and try again",
        resource, name, null);
  }

  /** The answer to a completed delete of a resource that does not return the deleted object. */
  static MockResponse success(Resources.Resource resource, String name, String uid) {
    return respond(200, new StatusBuilder().withStatus("Success").withNewDetails().withName(name)
        .withGroup(emptyToNull(resource.group())).withKind(resource.plural()).withUid(uid).endDetails()
        .withNewMetadata().endMetadata().build());
  }

  private static MockResponse withDetails(int code, String message, Resources.Resource resource, String name,
      String uid) {
    return respond(code, new StatusBuilder().withStatus("Failure").withCode(code).withReason(reason(code))
        .withMessage(message).withNewDetails().withName(name).withGroup(emptyToNull(resource.group()))
        .withKind(resource.plural()).withUid(uid).endDetails().withNewMetadata().endMetadata().build());
  }

  private static String qualifier(Resources.Resource resource) {
    return resource.group().isEmpty() ? "" : "." + resource.group();
  }

  private static String emptyToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }

  private static MockResponse respond(int code, io.fabric8.kubernetes.api.model.Status status) {
    return new MockResponse().setResponseCode(code).setHeader("Content-Type", "application/json")
        .setBody(Serialization.asJson(status));
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
      case 415 -> "UnsupportedMediaType";
      case 422 -> "Invalid";
      case 429 -> "TooManyRequests";
      case 503 -> "ServiceUnavailable";
      case 504 -> "Timeout";
      default -> code >= 500 ? "InternalError" : "Unknown";
    };
  }
}
