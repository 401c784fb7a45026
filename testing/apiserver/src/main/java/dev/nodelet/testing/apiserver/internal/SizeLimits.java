package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.nodelet.testing.apiserver.internal.Resources.Resource;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The API server's size limit on ConfigMaps and Secrets ({@code core.MaxSecretSize}, 1 MiB): the total of a
 * ConfigMap's {@code data} and {@code binaryData} values, of a Secret's decoded {@code data} (with
 * {@code stringData} folded in, as the API server converts it). Over it, a write is {@code 422 Invalid}.
 */
final class SizeLimits {

  /** {@code core.MaxSecretSize}. */
  static final int MAX_SIZE = 1024 * 1024;
  private static final String TOO_LONG = "Too long: must have at most " + MAX_SIZE + " bytes";

  private SizeLimits() {
  }

  /** Refuses a ConfigMap or Secret over the limit; other objects pass. */
  static void check(Resource resource, JsonNode object) {
    String field;
    long size;
    switch (resource.plural()) {
      case "configmaps" -> {
        field = "[]"; // the whole object, as the API server's validation names it
        size = sum(object.path("data"), false) + sum(object.path("binaryData"), true);
      }
      case "secrets" -> {
        field = "data";
        Map<String, Long> sizes = new HashMap<>();
        sizes(object.path("data"), true, sizes);
        sizes(object.path("stringData"), false, sizes); // stringData wins over data, key by key
        size = sizes.values().stream().mapToLong(Long::longValue).sum();
      }
      default -> {
        return;
      }
    }
    if (size > MAX_SIZE) {
      String name = object.path("metadata").path("name").asText("");
      throw new Admission.Rejected(422, resource.kind() + " \"" + name + "\" is invalid: " + field + ": " + TOO_LONG,
          List.<String[]>of(new String[] {"FieldValueTooLong", field, TOO_LONG}));
    }
  }

  private static long sum(JsonNode values, boolean base64) {
    Map<String, Long> sizes = new HashMap<>();
    sizes(values, base64, sizes);
    return sizes.values().stream().mapToLong(Long::longValue).sum();
  }

  private static void sizes(JsonNode values, boolean base64, Map<String, Long> into) {
    for (Iterator<Map.Entry<String, JsonNode>> it = values.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String text = e.getValue().asText("");
      into.put(e.getKey(), (long) (base64 ? decodedLength(text) : text.getBytes(StandardCharsets.UTF_8).length));
    }
  }

  private static int decodedLength(String text) {
    try {
      return Base64.getDecoder().decode(text).length;
    } catch (IllegalArgumentException e) {
      return text.length(); // not base64: the decoding step refuses it on its own
    }
  }
}
