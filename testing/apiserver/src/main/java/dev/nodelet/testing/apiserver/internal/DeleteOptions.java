package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.mockwebserver.http.MockResponse;

/** The preconditions of a delete's {@code DeleteOptions} ({@code uid}, {@code resourceVersion}). */
final class DeleteOptions {

  private DeleteOptions() {
  }

  /**
   * The 409 a delete gets when the uid or resourceVersion preconditions of its DeleteOptions do not hold (a dry run
   * checks them too); null when they hold.
   */
  static MockResponse preconditionFailure(JsonNode deleteOptions, String current) {
    JsonNode preconditions = deleteOptions.path("preconditions");
    JsonNode metadata = Json.read(current).path("metadata");
    String uid = preconditions.path("uid").asText("");
    if (!uid.isEmpty() && !uid.equals(metadata.path("uid").asText())) {
      return Status.response(409, "Precondition failed: UID in precondition: " + uid + ", UID in object meta: "
          + metadata.path("uid").asText());
    }
    String rv = preconditions.path("resourceVersion").asText("");
    if (!rv.isEmpty() && !rv.equals(metadata.path("resourceVersion").asText())) {
      return Status.response(409, "Precondition failed: ResourceVersion in precondition: " + rv
          + ", ResourceVersion in object meta: " + metadata.path("resourceVersion").asText());
    }
    return null;
  }
}
