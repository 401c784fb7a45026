package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.UncheckedIOException;

/** Reading stored JSON, which is valid: the server wrote it. */
final class Json {

  private Json() {
  }

  static JsonNode read(String json) {
    try {
      return Serialization.jsonMapper().readTree(json);
    } catch (IOException e) {
      throw new UncheckedIOException("stored object is not JSON", e);
    }
  }
}
