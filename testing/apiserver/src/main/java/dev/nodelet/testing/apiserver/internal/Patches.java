package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * JSON merge patch (RFC 7386) and the strategic merge patch of the built-in types the server serves: lists with a
 * merge key are merged element by element, {@code finalizers} as a set, the {@code $patch}, {@code $retainKeys},
 * {@code $deleteFromPrimitiveList} and {@code $setElementOrder} directives as {@code apimachinery/strategicpatch}.
 */
final class Patches {

  /** The {@code patchMergeKey} of the list fields of the served types (Go struct tags), by field name. */
  private static final Map<String, String> MERGE_KEYS = Map.ofEntries(
      Map.entry("containers", "name"), Map.entry("initContainers", "name"),
      Map.entry("ephemeralContainers", "name"), Map.entry("volumes", "name"), Map.entry("env", "name"),
      Map.entry("volumeMounts", "mountPath"), Map.entry("volumeDevices", "devicePath"),
      Map.entry("imagePullSecrets", "name"), Map.entry("hostAliases", "ip"), Map.entry("conditions", "type"),
      Map.entry("taints", "key"), Map.entry("ownerReferences", "uid"), Map.entry("addresses", "type"),
      Map.entry("resourceClaims", "name"), Map.entry("schedulingGates", "name"), Map.entry("podIPs", "ip"),
      Map.entry("hostIPs", "ip"), Map.entry("secrets", "name"),
      Map.entry("topologySpreadConstraints", "topologyKey"));
  /** Primitive lists merged as sets ({@code patchStrategy:"merge"} on a list of strings). */
  private static final Set<String> MERGED_PRIMITIVE_LISTS = Set.of("finalizers");

  private Patches() {
  }

  /** RFC 7386: objects merge recursively, {@code null} removes a key, anything else (lists too) replaces. */
  static JsonNode merge(JsonNode target, JsonNode patch) {
    if (!patch.isObject()) {
      return patch.deepCopy();
    }
    ObjectNode result = target != null && target.isObject() ? ((ObjectNode) target).deepCopy()
        : com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
    for (Iterator<Map.Entry<String, JsonNode>> it = patch.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      if (e.getValue().isNull()) {
        result.remove(e.getKey());
      } else {
        result.set(e.getKey(), merge(result.get(e.getKey()), e.getValue()));
      }
    }
    return result;
  }

  /**
   * A strategic merge patch of an object.
   *
   * @throws IllegalArgumentException for a directive the server does not know, naming it
   */
  static JsonNode strategic(JsonNode target, JsonNode patch) {
    if (!patch.isObject()) {
      throw new IllegalArgumentException("a strategic merge patch must be a JSON object");
    }
    return mergeMap(target != null && target.isObject() ? (ObjectNode) target.deepCopy()
        : com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode(), (ObjectNode) patch);
  }

  private static ObjectNode mergeMap(ObjectNode target, ObjectNode patch) {
    String directive = patch.path("$patch").asText("");
    if (directive.equals("replace")) {
      ObjectNode replaced = patch.deepCopy();
      replaced.remove("$patch");
      return replaced;
    }
    if (directive.equals("delete")) {
      return null;
    }
    if (!directive.isEmpty() && !directive.equals("merge")) {
      throw new IllegalArgumentException("Unknown patch type: " + directive + " in map: " + patch);
    }
    JsonNode retainKeys = patch.get("$retainKeys");
    for (Iterator<Map.Entry<String, JsonNode>> it = patch.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String key = e.getKey();
      JsonNode value = e.getValue();
      if (key.equals("$patch") || key.equals("$retainKeys") || key.startsWith("$setElementOrder/")) {
        continue;
      }
      if (key.startsWith("$deleteFromPrimitiveList/")) {
        String field = key.substring("$deleteFromPrimitiveList/".length());
        if (target.get(field) instanceof ArrayNode list) {
          for (int i = list.size() - 1; i >= 0; i--) {
            if (contains(value, list.get(i))) {
              list.remove(i);
            }
          }
        }
        continue;
      }
      if (key.startsWith("$")) {
        throw new IllegalArgumentException("unknown directive in a strategic merge patch: " + key);
      }
      JsonNode current = target.get(key);
      if (value.isNull()) {
        target.remove(key);
      } else if (value.isObject() && current != null && current.isObject()) {
        ObjectNode merged = mergeMap((ObjectNode) current, (ObjectNode) value);
        if (merged == null) {
          target.remove(key);
        } else {
          target.set(key, merged);
        }
      } else if (value.isObject()) {
        ObjectNode created = mergeMap(((ObjectNode) value).deepCopy().removeAll(), (ObjectNode) value);
        if (created != null) {
          target.set(key, created);
        }
      } else if (value.isArray() && current != null && current.isArray()) {
        target.set(key, mergeList(key, (ArrayNode) current, (ArrayNode) value));
      } else if (value.isArray()) {
        target.set(key, mergeList(key, com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.arrayNode(), (ArrayNode) value));
      } else {
        target.set(key, value.deepCopy());
      }
    }
    if (retainKeys != null && retainKeys.isArray()) {
      target.retain(names(retainKeys));
    }
    return target;
  }

  /** The merge key of a list field, or null when the list is atomic (replaced whole). */
  static String mergeKey(String field, ArrayNode target, ArrayNode patch) {
    if (field.equals("ports")) { // container ports merge on containerPort, service ports on port
      return hasKey(target, "containerPort") || hasKey(patch, "containerPort") ? "containerPort" : "port";
    }
    return MERGE_KEYS.get(field);
  }

  /** True for a list of strings merged as a set, such as {@code finalizers}. */
  static boolean isSet(String field) {
    return MERGED_PRIMITIVE_LISTS.contains(field);
  }

  private static ArrayNode mergeList(String field, ArrayNode target, ArrayNode patch) {
    String mergeKey = mergeKey(field, target, patch);
    if (MERGED_PRIMITIVE_LISTS.contains(field)) {
      ArrayNode result = target.deepCopy();
      for (JsonNode v : patch) {
        if (!contains(result, v)) {
          result.add(v.deepCopy());
        }
      }
      return result;
    }
    for (JsonNode element : patch) {
      if (element.isObject() && element.path("$patch").asText("").equals("replace")) {
        ArrayNode replaced = patch.deepCopy();
        replaced.removeAll();
        patch.forEach(e -> {
          if (!e.has("$patch")) {
            replaced.add(e.deepCopy());
          }
        });
        return replaced;
      }
    }
    if (mergeKey == null) {
      return patch.deepCopy(); // no merge key: the list is replaced whole
    }
    ArrayNode result = target.deepCopy();
    for (JsonNode element : patch) {
      if (!element.isObject()) {
        throw new IllegalArgumentException("the list " + field + " merges on \"" + mergeKey
            + "\": its elements must be objects");
      }
      JsonNode key = element.get(mergeKey);
      int index = indexOf(result, mergeKey, key);
      boolean delete = element.path("$patch").asText("").equals("delete");
      if (delete) {
        if (index >= 0) {
          result.remove(index);
        }
      } else if (index >= 0) {
        ObjectNode merged = mergeMap((ObjectNode) result.get(index), (ObjectNode) element);
        result.set(index, merged);
      } else {
        ObjectNode added = ((ObjectNode) element).deepCopy();
        added.remove("$patch");
        result.add(mergeMap(added.deepCopy().removeAll(), added));
      }
    }
    return result;
  }

  private static boolean hasKey(ArrayNode list, String key) {
    for (JsonNode e : list) {
      if (e.has(key)) {
        return true;
      }
    }
    return false;
  }

  private static int indexOf(ArrayNode list, String mergeKey, JsonNode key) {
    for (int i = 0; i < list.size(); i++) {
      if (key != null && key.equals(list.get(i).get(mergeKey))) {
        return i;
      }
    }
    return -1;
  }

  private static boolean contains(JsonNode list, JsonNode value) {
    for (JsonNode e : list) {
      if (e.equals(value)) {
        return true;
      }
    }
    return false;
  }

  private static List<String> names(JsonNode array) {
    List<String> names = new ArrayList<>();
    array.forEach(n -> names.add(n.asText()));
    return names;
  }

  /** A patch of the given media type applied to {@code current}: 415 for a type that is not a patch. */
  static JsonNode byMediaType(String mediaType, JsonNode current, JsonNode patch) {
    switch (mediaType) {
      case "application/json-patch+json":
        try {
          return io.fabric8.zjsonpatch.JsonPatch.apply(patch, current);
        } catch (RuntimeException e) {
          throw new Admission.Rejected(422, "the server rejected our request due to an error in our request: "
              + e.getMessage(), List.of());
        }
      case "application/merge-patch+json":
        return Patches.merge(current, patch);
      case "application/strategic-merge-patch+json":
        return Patches.strategic(current, patch);
      default:
        throw new Admission.Rejected(415, "the body of the request was in an unknown format - accepted media "
            + "types include: application/json-patch+json, application/merge-patch+json, "
            + "application/apply-patch+yaml, application/strategic-merge-patch+json", List.of());
    }
  }
}
