package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.nodelet.testing.apiserver.internal.Resources.Resource;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.NavigableMap;

/** Typed lists ({@code PodList}, ...) with {@code limit} and {@code continue} paging, as the API server writes them. */
final class Lists {

  private Lists() {
  }

  /**
   * One page of {@code items} (keyed {@code namespace/name}, in key order). The continue token carries the
   * resourceVersion of the first page and the last key served.
   *
   * @throws IllegalArgumentException for a malformed limit or continue token
   */
  static String page(Resource resource, NavigableMap<String, String> items, long resourceVersion, String limit,
      String continueToken) {
    long listVersion = resourceVersion;
    NavigableMap<String, String> rest = items;
    if (continueToken != null && !continueToken.isEmpty()) {
      JsonNode token;
      try {
        token = Serialization.jsonMapper().readTree(Base64.getUrlDecoder().decode(continueToken));
      } catch (IllegalArgumentException | java.io.IOException e) {
        throw new IllegalArgumentException("continue key is not valid: " + e.getMessage());
      }
      if (!token.path("start").isTextual() || !token.path("rv").canConvertToLong()) {
        throw new IllegalArgumentException("continue key is not valid: incorrect encoded start resourceVersion "
            + "(version meta.k8s.io/v1)");
      }
      listVersion = token.path("rv").asLong();
      rest = items.tailMap(token.path("start").asText(), false);
    }
    int max = Integer.MAX_VALUE;
    if (limit != null && !limit.isEmpty()) {
      try {
        max = Integer.parseInt(limit);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("limit: Invalid value: \"" + limit + "\": must be an integer");
      }
      max = max <= 0 ? Integer.MAX_VALUE : max;
    }
    ObjectNode list = JsonNodeFactory.instance.objectNode().put("kind", resource.kind() + "List")
        .put("apiVersion", resource.apiVersion());
    ObjectNode metadata = list.putObject("metadata").put("resourceVersion", String.valueOf(listVersion));
    ArrayNode out = list.putArray("items");
    String last = null;
    int count = 0;
    for (Map.Entry<String, String> e : rest.entrySet()) {
      if (count == max) {
        String next = JsonNodeFactory.instance.objectNode().put("v", "meta.k8s.io/v1").put("rv", listVersion)
            .put("start", last).toString();
        metadata.put("continue", Base64.getUrlEncoder().withoutPadding()
            .encodeToString(next.getBytes(StandardCharsets.UTF_8)));
        metadata.put("remainingItemCount", rest.size() - count);
        break;
      }
      out.add(Json.read(e.getValue()));
      last = e.getKey();
      count++;
    }
    return list.toString();
  }
}
