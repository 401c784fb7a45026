package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code dryRun=All}, as the API server's dry-run storage treats it: the write is checked and answered, nothing is
 * stored, no resourceVersion is used up and no watch hears of it. A dry-run create answers the object without a
 * resourceVersion (none was given out), a dry-run update or patch with the stored one, a dry-run delete as the delete
 * would.
 */
final class DryRun {

  private DryRun() {
  }

  /**
   * Whether a write is a dry run: the {@code dryRun} query parameter, or for a delete the {@code dryRun} list of its
   * {@code DeleteOptions} body (where kubectl and fabric8 put it).
   *
   * @param deleteOptions the body of a delete, or null
   * @throws IllegalArgumentException for a value other than {@code All} (a 400, as the API server answers)
   */
  static boolean requested(RequestInfo info, JsonNode deleteOptions) {
    List<String> values = new ArrayList<>();
    String param = info.param("dryRun");
    if (param != null && !param.isEmpty()) {
      values.add(param);
    }
    JsonNode listed = deleteOptions == null ? null : deleteOptions.get("dryRun");
    if (listed != null && listed.isArray()) {
      listed.forEach(v -> values.add(v.asText()));
    }
    for (String value : values) {
      if (!value.equals("All")) {
        throw new IllegalArgumentException("dryRun: Unsupported value: \"" + value + "\": supported values: \"All\"");
      }
    }
    return !values.isEmpty();
  }

  /**
   * The object a dry-run create or update answers.
   *
   * @param storedResourceVersion the resourceVersion of the stored object an update would replace; null on create
   */
  static String answer(String object, String storedResourceVersion) {
    if (!(Json.read(object) instanceof ObjectNode node) || !(node.get("metadata") instanceof ObjectNode metadata)) {
      return object;
    }
    if (storedResourceVersion == null) {
      metadata.remove("resourceVersion");
    } else {
      metadata.put("resourceVersion", storedResourceVersion);
    }
    return node.toString();
  }
}
