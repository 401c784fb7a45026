package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import dev.nodelet.testing.apiserver.internal.Resources.Resource;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Server-side apply: the fields an applied configuration sets, their owners in {@code metadata.managedFields}
 * (FieldsV1), conflicts between field managers and the removal of fields a manager no longer applies. A field is a
 * path of FieldsV1 keys ({@code f:spec}, {@code k:{"name":"c"}}, {@code v:"x"}); lists with a merge key are
 * merged per element, other lists are atomic.
 */
final class Apply {

  private static final Set<String> UNMANAGED_METADATA = Set.of("name", "namespace", "uid", "resourceVersion",
      "generation", "creationTimestamp", "managedFields", "deletionTimestamp", "selfLink");

  /** The outcome: the object to store, or the conflicting fields with their managers. */
  record Result(ObjectNode object, Map<String, String> conflicts) {
  }

  private Apply() {
  }

  /**
   * Applies {@code applied} for {@code manager} to {@code current} (null to create).
   *
   * @param force take the conflicting fields from their managers instead of failing
   */
  static Result apply(ObjectNode current, ObjectNode applied, String manager, String apiVersion, boolean force) {
    Set<List<String>> fields = fields(applied);
    Map<String, Set<List<String>>> owners = new LinkedHashMap<>();
    ArrayNode managed = current == null ? null : (ArrayNode) current.path("metadata").get("managedFields");
    Map<String, ObjectNode> entries = new LinkedHashMap<>();
    if (managed != null) {
      for (JsonNode entry : managed) {
        String key = ManagedFields.key(entry);
        entries.put(key, (ObjectNode) entry);
        owners.put(key, fromFieldsV1(entry.path("fieldsV1")));
      }
    }
    ObjectNode selfEntry = JsonNodeFactory.instance.objectNode().put("manager", manager).put("operation", "Apply")
        .put("apiVersion", apiVersion);
    String self = ManagedFields.key(selfEntry);
    Map<String, String> conflicts = new LinkedHashMap<>();
    for (Map.Entry<String, Set<List<String>>> other : owners.entrySet()) {
      if (other.getKey().equals(self)) {
        continue;
      }
      for (List<String> field : fields) {
        if (other.getValue().contains(field) && !same(current, applied, field)) {
          if (force) {
            other.getValue().remove(field);
          } else {
            conflicts.put(path(field), ManagedFields.describe(entries.get(other.getKey())));
          }
        }
      }
    }
    if (!conflicts.isEmpty()) {
      return new Result(null, conflicts);
    }
    ObjectNode result;
    if (current == null) {
      result = applied.deepCopy();
    } else {
      result = current.deepCopy();
      // fields this manager applied before and applies no more go, unless another manager owns them
      for (List<String> field : owners.getOrDefault(self, Set.of())) {
        if (!fields.contains(field) && owners.entrySet().stream()
            .noneMatch(e -> !e.getKey().equals(self) && e.getValue().contains(field))) {
          remove(result, field);
        }
      }
      ObjectNode patch = applied.deepCopy();
      patch.with("metadata").remove(List.of("resourceVersion", "managedFields"));
      result = (ObjectNode) Patches.strategic(result, patch);
    }
    owners.put(self, fields);
    ArrayNode out = JsonNodeFactory.instance.arrayNode();
    String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    for (Map.Entry<String, Set<List<String>>> e : owners.entrySet()) {
      if (e.getValue().isEmpty()) {
        continue;
      }
      ObjectNode entry = e.getKey().equals(self) || !entries.containsKey(e.getKey())
          ? selfEntry.deepCopy().put("time", now).put("fieldsType", "FieldsV1")
          : entries.get(e.getKey()).deepCopy();
      entry.set("fieldsV1", toFieldsV1(e.getValue()));
      out.add(entry);
    }
    result.with("metadata").set("managedFields", out);
    return new Result(result, Map.of());
  }

  /** The object the server-side apply of a request leaves; a 409 with the conflicting fields unless forced. */
  static ObjectNode request(RequestInfo info, Resource resource, ObjectNode current, JsonNode body) {
    String manager = java.util.Objects.requireNonNullElse(info.param("fieldManager"), "");
    if (manager.isEmpty()) {
      throw new Admission.Rejected(422, "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: "
          + "is required for apply patch", List.of());
    }
    if (!(body instanceof ObjectNode config)) {
      throw new IllegalArgumentException("an applied configuration must be an object");
    }
    if (config.path("apiVersion").asText("").isEmpty() || config.path("kind").asText("").isEmpty()) {
      throw new IllegalArgumentException("invalid object type: " + config.path("apiVersion").asText("") + ", Kind="
          + config.path("kind").asText(""));
    }
    Result result = apply(current, config, manager, resource.apiVersion(),
        "true".equals(info.param("force")));
    if (!result.conflicts().isEmpty()) {
      List<String[]> causes = new ArrayList<>();
      result.conflicts().forEach((field, owner) -> causes.add(new String[] {"FieldManagerConflict", field,
          "conflict with " + owner}));
      String detail = result.conflicts().entrySet().stream()
          .map(e -> "conflict with " + e.getValue() + ": " + e.getKey())
          .collect(java.util.stream.Collectors.joining("\n- ", "\n- ", ""));
      throw new Admission.Rejected(409, "Apply failed with " + result.conflicts().size() + " conflict"
          + (result.conflicts().size() == 1 ? "" : "s") + ":" + (result.conflicts().size() == 1
          ? " " + detail.substring(3) : detail), causes);
    }
    return result.object();
  }

  /** The managed paths of an object or applied configuration. */
  static Set<List<String>> fields(JsonNode object) {
    Set<List<String>> fields = new LinkedHashSet<>();
    collect(object, new ArrayList<>(), null, fields);
    return fields;
  }

  /** The managed paths of an applied configuration. */
  private static void collect(JsonNode node, List<String> prefix, String fieldName, Set<List<String>> out) {
    if (node.isObject() && node.size() > 0) {
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        if (prefix.isEmpty() && (e.getKey().equals("apiVersion") || e.getKey().equals("kind"))) {
          continue;
        }
        if (prefix.equals(List.of("f:metadata")) && UNMANAGED_METADATA.contains(e.getKey())) {
          continue;
        }
        collect(e.getValue(), append(prefix, "f:" + e.getKey()), e.getKey(), out);
      }
      return;
    }
    if (node.isArray() && fieldName != null) {
      ArrayNode list = (ArrayNode) node;
      String mergeKey = Patches.mergeKey(fieldName, list, list);
      if (Patches.isSet(fieldName)) {
        list.forEach(v -> out.add(append(prefix, "v:" + v)));
        return;
      }
      if (mergeKey != null) {
        for (JsonNode element : list) {
          if (element.has(mergeKey)) {
            List<String> elementPath = append(prefix, key(mergeKey, element.get(mergeKey)));
            out.add(append(elementPath, "."));
            collect(element, elementPath, null, out);
          }
        }
        return;
      }
    }
    if (!prefix.isEmpty()) {
      out.add(prefix);
    }
  }

  private static String key(String mergeKey, JsonNode value) {
    return "k:" + JsonNodeFactory.instance.objectNode().set(mergeKey, value).toString();
  }

  private static List<String> append(List<String> prefix, String token) {
    List<String> result = new ArrayList<>(prefix);
    result.add(token);
    return result;
  }

  private static String path(List<String> field) {
    StringBuilder sb = new StringBuilder();
    for (String token : field) {
      if (token.equals(".")) {
        continue;
      }
      if (token.startsWith("f:")) {
        sb.append('.').append(token.substring(2));
      } else if (token.startsWith("k:")) { // [name="c"], keys as structured-merge-diff prints them
        List<String> keys = new ArrayList<>();
        Json.read(token.substring(2)).fields().forEachRemaining(k -> keys.add(k.getKey() + "=" + k.getValue()));
        sb.append('[').append(String.join(",", keys)).append(']');
      } else {
        sb.append("[=").append(token.substring(2)).append(']');
      }
    }
    return sb.toString();
  }

  /** The node at a path, or null. */
  static JsonNode resolve(JsonNode node, List<String> field) {
    JsonNode current = node;
    for (String token : field) {
      if (current == null) {
        return null;
      }
      if (token.equals(".")) {
        continue;
      }
      if (token.startsWith("f:")) {
        current = current.get(token.substring(2));
      } else if (token.startsWith("k:")) {
        current = find(current, Json.read(token.substring(2)));
      } else if (token.startsWith("v:")) {
        JsonNode value = Json.read(token.substring(2));
        JsonNode found = null;
        for (JsonNode e : current) {
          if (e.equals(value)) {
            found = e;
          }
        }
        current = found;
      }
    }
    return current;
  }

  private static JsonNode find(JsonNode list, JsonNode key) {
    if (!list.isArray()) {
      return null;
    }
    for (JsonNode element : list) {
      boolean matches = true;
      for (Iterator<Map.Entry<String, JsonNode>> it = key.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> k = it.next();
        matches &= k.getValue().equals(element.get(k.getKey()));
      }
      if (matches) {
        return element;
      }
    }
    return null;
  }

  static boolean same(JsonNode current, JsonNode applied, List<String> field) {
    JsonNode a = resolve(current, field);
    JsonNode b = resolve(applied, field);
    if (field.get(field.size() - 1).equals(".")) { // a keyed element's own entry: that it exists, not its fields
      return (a == null) == (b == null);
    }
    return a == null ? b == null : a.equals(b);
  }

  private static void remove(JsonNode root, List<String> field) {
    List<String> tokens = field.get(field.size() - 1).equals(".") ? field.subList(0, field.size() - 1) : field;
    if (tokens.isEmpty()) {
      return;
    }
    JsonNode parent = resolve(root, tokens.subList(0, tokens.size() - 1));
    String last = tokens.get(tokens.size() - 1);
    if (parent instanceof ObjectNode o && last.startsWith("f:")) {
      o.remove(last.substring(2));
    } else if (parent instanceof ArrayNode list) {
      JsonNode target = resolve(root, tokens);
      for (int i = 0; i < list.size(); i++) {
        if (list.get(i) == target) {
          list.remove(i);
          return;
        }
      }
    }
  }

  static ObjectNode toFieldsV1(Set<List<String>> fields) {
    ObjectNode root = JsonNodeFactory.instance.objectNode();
    for (List<String> field : fields) {
      ObjectNode node = root;
      for (String token : field) {
        node = node.with(token);
      }
    }
    return root;
  }

  static Set<List<String>> fromFieldsV1(JsonNode fieldsV1) {
    Set<List<String>> out = new LinkedHashSet<>();
    fromFieldsV1(fieldsV1, new ArrayList<>(), out);
    return out;
  }

  private static void fromFieldsV1(JsonNode node, List<String> prefix, Set<List<String>> out) {
    if (node.isObject() && node.size() == 0 && !prefix.isEmpty()) {
      out.add(prefix);
      return;
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      fromFieldsV1(e.getValue(), append(prefix, e.getKey()), out);
    }
  }
}
