package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.mockwebserver.http.MockResponse;

/**
 * The API server's UID check on an update or patch: a body whose {@code metadata.uid} names another object than the
 * one stored under that name is refused with 409, as a kube-apiserver's {@code Preconditions.Check} does. Clients
 * (the kubelet's status manager) put the UID into a status patch to make it apply to that pod only.
 */
final class UidPrecondition {

  private UidPrecondition() {
  }

  /**
   * @param current the stored object
   * @param object the object the write would store
   * @return the 409 response; null when the UIDs agree or the body has none
   */
  static MockResponse check(JsonNode current, JsonNode object) {
    String wanted = object.path("metadata").path("uid").asText("");
    String stored = current.path("metadata").path("uid").asText("");
    if (wanted.isEmpty() || wanted.equals(stored)) {
      return null;
    }
    return Status.response(409, "Precondition failed: UID in precondition: " + wanted + ", UID in object meta: "
        + stored);
  }
}
