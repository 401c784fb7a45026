package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.nodelet.testing.apiserver.internal.Resources.Resource;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code Update} entries of {@code metadata.managedFields}: every create, update and patch that is not a
 * server-side apply makes its manager the owner of the fields it set or changed, taking them from any other
 * manager (an update never conflicts), as the API server's field manager does. An applier that later applies
 * another value to such a field then conflicts with that manager ({@link Apply}).
 */
final class ManagedFields {

  private ManagedFields() {
  }

  /**
   * The manager of a write: its {@code fieldManager}, else its User-Agent up to the first {@code /} (at most 128
   * characters), as the API server names it.
   */
  static String manager(String fieldManager, String userAgent) {
    if (fieldManager != null && !fieldManager.isEmpty()) {
      return fieldManager;
    }
    String agent = userAgent == null ? "" : userAgent;
    int slash = agent.indexOf('/');
    agent = slash >= 0 ? agent.substring(0, slash) : agent;
    return agent.length() > 128 ? agent.substring(0, 128) : agent;
  }

  /** An entry's identity: manager, operation and subresource. */
  static String key(JsonNode entry) {
    return entry.path("manager").asText() + "\u0000" + entry.path("operation").asText() + "\u0000"
        + entry.path("subresource").asText("");
  }

  /** An entry as a conflict names it: {@code "kubectl-patch" using v1}, {@code "alice"} for an applier. */
  static String describe(JsonNode entry) {
    StringBuilder sb = new StringBuilder("\"").append(entry.path("manager").asText()).append('"');
    if (!entry.path("subresource").asText("").isEmpty()) {
      sb.append(" with subresource \"").append(entry.path("subresource").asText()).append('"');
    }
    if (entry.path("operation").asText().equals("Update")) {
      sb.append(" using ").append(entry.path("apiVersion").asText());
    }
    return sb.toString();
  }

  /**
   * Records a write of {@code manager} on {@code object} (changed in place), which replaces {@code previous} (null
   * on create).
   *
   * @param sent the {@code managedFields} the request carried, before defaulting: a non-empty list replaces the
   *     stored entries, a list of one empty entry clears them; absent or empty keeps them
   */
  static void recordUpdate(Resource resource, String subresource, JsonNode previous, ObjectNode object, JsonNode sent,
      String manager) {
    ObjectNode metadata = object.with("metadata");
    JsonNode base;
    if (sent != null && sent.isArray() && !sent.isEmpty()) {
      if (sent.size() == 1 && sent.get(0).isEmpty()) {
        metadata.remove("managedFields");
        return;
      }
      base = sent;
    } else {
      base = previous == null ? null : previous.path("metadata").get("managedFields");
    }
    Map<String, ObjectNode> entries = new LinkedHashMap<>();
    Map<String, Set<List<String>>> owners = new LinkedHashMap<>();
    if (base != null && base.isArray()) {
      for (JsonNode entry : base) {
        if (entry instanceof ObjectNode e) {
          entries.put(key(e), e.deepCopy());
          owners.put(key(e), Apply.fromFieldsV1(e.path("fieldsV1")));
        }
      }
    }
    Set<List<String>> changed = new LinkedHashSet<>();
    boolean statusOnly = !subresource.isEmpty();
    boolean hasStatus = resource.subresources().contains("status");
    for (List<String> field : Apply.fields(object)) {
      boolean status = field.get(0).equals("f:status");
      if ((statusOnly ? status : !(hasStatus && status))
          && (previous == null || !Apply.same(previous, object, field))) {
        changed.add(field);
      }
    }
    // what the write removed, nobody owns any more; what it changed, it owns alone
    boolean lost = false;
    for (Set<List<String>> owned : owners.values()) {
      lost |= owned.removeIf(f -> changed.contains(f) || Apply.resolve(object, f) == null);
    }
    if (changed.isEmpty() && !lost) { // an update that changes nothing changes no entry either
      if (base != null && base.isArray() && !base.isEmpty()) {
        metadata.set("managedFields", base.deepCopy());
      }
      return;
    }
    if (!changed.isEmpty()) {
      ObjectNode self = JsonNodeFactory.instance.objectNode().put("manager", manager).put("operation", "Update")
          .put("apiVersion", resource.apiVersion())
          .put("time", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString()).put("fieldsType", "FieldsV1");
      if (statusOnly) {
        self.put("subresource", subresource);
      }
      String selfKey = key(self);
      entries.put(selfKey, self);
      owners.computeIfAbsent(selfKey, k -> new LinkedHashSet<>()).addAll(changed);
    }
    ArrayNode out = JsonNodeFactory.instance.arrayNode();
    entries.forEach((key, entry) -> {
      if (!owners.get(key).isEmpty()) {
        entry.set("fieldsV1", Apply.toFieldsV1(owners.get(key)));
        out.add(entry);
      }
    });
    if (out.isEmpty()) {
      metadata.remove("managedFields");
    } else {
      metadata.set("managedFields", out);
    }
  }
}
