package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.nodelet.testing.apiserver.internal.Resources.Resource;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What the API server checks and fills in on a write before storing it: {@code apiVersion} and {@code kind} from
 * the URL, name validation, unknown fields ({@code fieldValidation}), Secret {@code stringData}, ResourceSlice
 * device taints' {@code timeAdded} and {@code metadata.generation}.
 */
final class Admission {

  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final String SUBDOMAIN_MESSAGE = "a lowercase RFC 1123 subdomain must consist of lower case "
      + "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
      + "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
      + "[a-z0-9])?)*')";
  private static final String LABEL_MESSAGE = "a lowercase RFC 1123 label must consist of lower case alphanumeric "
      + "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
      + "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
  /** Resources whose names are DNS labels; the others' are DNS subdomains. */
  private static final Set<String> LABEL_NAMED = Set.of("namespaces", "services");
  /** Resources whose strategy keeps {@code metadata.generation}: it moves on spec changes only. */
  private static final Set<String> GENERATION = Set.of("pods", "services", "resourceslices", "resourceclaims",
      "resourceclaimtemplates", "deviceclasses");

  /** A write the server refuses: the HTTP status and the Status message. */
  static final class Rejected extends RuntimeException {
    final int code;
    final transient List<String[]> causes; // {reason, field, message}

    Rejected(int code, String message, List<String[]> causes) {
      super(message, null, false, false);
      this.code = code;
      this.causes = causes;
    }
  }

  /** Per feature gate, the ResourceSlice fields it guards: spec fields, then {@code devices[]} fields. */
  static final Map<String, List<List<String>>> FEATURE_GATE_FIELDS = Map.of(
      "DRAPartitionableDevices", List.of(List.of("sharedCounters"), List.of("consumesCounters")),
      "DRADeviceTaints", List.of(List.of(), List.of("taints")),
      "DRADeviceBindingConditions", List.of(List.of(),
          List.of("bindingConditions", "bindingFailureConditions", "bindsToNode")));

  private Admission() {
  }

  /**
   * Drops the ResourceSlice fields of disabled feature gates, unless {@code previous} uses them (the API server's
   * rule, so that turning a gate off does not break stored objects).
   */
  static void dropDisabledFields(Resource resource, JsonNode previous, ObjectNode object, Set<String> disabled) {
    if (!resource.plural().equals("resourceslices") || !(object.path("spec") instanceof ObjectNode spec)) {
      return;
    }
    for (String gate : disabled) {
      List<String> specFields = FEATURE_GATE_FIELDS.get(gate).get(0);
      List<String> deviceFields = FEATURE_GATE_FIELDS.get(gate).get(1);
      if (previous != null && uses(previous.path("spec"), specFields, deviceFields)) {
        continue;
      }
      specFields.forEach(spec::remove);
      for (JsonNode device : spec.path("devices")) {
        if (device instanceof ObjectNode d) {
          deviceFields.forEach(d::remove);
        }
      }
    }
  }

  private static boolean uses(JsonNode spec, List<String> specFields, List<String> deviceFields) {
    if (specFields.stream().anyMatch(f -> !spec.path(f).isMissingNode() && !spec.path(f).isNull())) {
      return true;
    }
    for (JsonNode device : spec.path("devices")) {
      if (deviceFields.stream().anyMatch(f -> !device.path(f).isMissingNode() && !device.path(f).isNull())) {
        return true;
      }
    }
    return false;
  }

  /** Defaults {@code apiVersion}/{@code kind} from the URL and checks them, and the name and namespace. */
  static void admit(Resource resource, ObjectNode object, String urlNamespace, String urlName,
      boolean validateNames) {
    String apiVersion = object.path("apiVersion").asText("");
    String kind = object.path("kind").asText("");
    if (apiVersion.isEmpty()) {
      object.put("apiVersion", resource.apiVersion());
    } else if (!apiVersion.equals(resource.apiVersion())) {
      throw new Rejected(400, "the API version in the data (" + apiVersion + ") does not match the expected API "
          + "version (" + resource.apiVersion() + ")", List.of());
    }
    if (kind.isEmpty()) {
      object.put("kind", resource.kind());
    } else if (!kind.equals(resource.kind())) {
      throw new Rejected(400, "the kind in the data (" + kind + ") does not match the expected kind ("
          + resource.kind() + ")", List.of());
    }
    JsonNode metadata = object.path("metadata");
    String name = metadata.path("name").asText("");
    String namespace = metadata.path("namespace").asText("");
    if (urlName != null && !name.isEmpty() && !name.equals(urlName)) {
      throw new Rejected(400, "the name of the object (" + name + ") does not match the name on the URL ("
          + urlName + ")", List.of());
    }
    if (urlNamespace != null && !namespace.isEmpty() && !namespace.equals(urlNamespace)) {
      throw new Rejected(400, "the namespace of the provided object does not match the namespace sent on the "
          + "request", List.of());
    }
    if (validateNames && !name.isEmpty()) {
      boolean label = LABEL_NAMED.contains(resource.plural());
      Pattern pattern = label ? DNS_LABEL : DNS_SUBDOMAIN;
      int max = label ? 63 : 253;
      String problem = null;
      if (!pattern.matcher(name).matches()) {
        problem = label ? LABEL_MESSAGE : SUBDOMAIN_MESSAGE;
      } else if (name.length() > max) {
        problem = "must be no more than " + max + " characters";
      }
      if (problem != null) {
        String message = "Invalid value: \"" + name + "\": " + problem;
        throw new Rejected(422, resource.kind() + " \"" + name + "\" is invalid: metadata.name: " + message,
            List.<String[]>of(new String[] {"FieldValueInvalid", "metadata.name", message}));
      }
    }
  }

  /**
   * The unknown fields of an object, as {@code spec.containers[0].foo}: those its fabric8 model class has no
   * property for.
   */
  static List<String> unknownFields(Resource resource, JsonNode object) {
    List<String> unknown = new ArrayList<>();
    Object typed;
    try {
      typed = Serialization.jsonMapper().treeToValue(object, resource.type());
    } catch (Exception e) {
      throw new Rejected(400, "error decoding the request body into a " + resource.kind() + ": "
          + e.getMessage(), List.of());
    }
    collect(typed, "", unknown);
    return unknown;
  }

  private static void collect(Object value, String path, List<String> unknown) {
    if (value instanceof List<?> list) {
      for (int i = 0; i < list.size(); i++) {
        collect(list.get(i), path + "[" + i + "]", unknown);
      }
    } else if (value instanceof Map<?, ?> map) {
      map.forEach((k, v) -> collect(v, path + "[" + k + "]", unknown));
    } else if (value instanceof KubernetesResource && !(value instanceof io.fabric8.kubernetes.api.model.FieldsV1)) {
      for (Method m : value.getClass().getMethods()) {
        if (m.getParameterCount() != 0 || Modifier.isStatic(m.getModifiers()) || !m.getName().startsWith("get")
            || m.getName().equals("getClass")) {
          continue;
        }
        Object child;
        try {
          child = m.invoke(value);
        } catch (ReflectiveOperationException e) {
          continue;
        }
        if (m.getName().equals("getAdditionalProperties")) {
          if (child instanceof Map<?, ?> extra) {
            extra.keySet().forEach(k -> unknown.add(join(path, String.valueOf(k))));
          }
          continue;
        }
        String field = Character.toLowerCase(m.getName().charAt(3)) + m.getName().substring(4);
        collect(child, join(path, field), unknown);
      }
    }
  }

  private static String join(String path, String field) {
    return path.isEmpty() ? field : path + "." + field;
  }

  /**
   * What the API server fills in on the object it stores ({@code previous} is the stored object before, null on
   * create); {@code object} is changed in place.
   */
  static void defaults(Resource resource, JsonNode previous, ObjectNode object) {
    ObjectNode metadata = object.with("metadata");
    // empty maps and lists are not written (omitempty), as the API server encodes them
    for (String field : List.of("labels", "annotations", "finalizers", "ownerReferences", "managedFields")) {
      if (metadata.has(field) && (metadata.get(field).isEmpty() || metadata.get(field).isNull())) {
        metadata.remove(field);
      }
    }
    switch (resource.plural()) {
      case "secrets" -> {
        JsonNode stringData = object.remove("stringData");
        if (stringData != null && stringData.isObject()) {
          ObjectNode data = object.with("data");
          for (Iterator<Map.Entry<String, JsonNode>> it = stringData.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            data.put(e.getKey(), Base64.getEncoder()
                .encodeToString(e.getValue().asText().getBytes(StandardCharsets.UTF_8)));
          }
        }
        if (object.path("type").asText("").isEmpty()) {
          object.put("type", "Opaque");
        }
      }
      case "namespaces" -> {
        metadata.with("labels").put("kubernetes.io/metadata.name", metadata.path("name").asText());
        object.with("spec").withArray("finalizers").removeAll().add("kubernetes");
        if (object.path("status").path("phase").asText("").isEmpty()) {
          object.with("status").put("phase", "Active");
        }
      }
      case "pods" -> {
        if (previous == null && object.path("status").path("phase").asText("").isEmpty()) {
          object.with("status").put("phase", "Pending");
        }
      }
      case "resourceslices" -> {
        // a taint without timeAdded gets the time of this write, to the second (v1 DeviceTaint defaulting)
        String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        for (JsonNode device : object.path("spec").path("devices")) {
          for (JsonNode taint : device.path("taints")) {
            if (taint instanceof ObjectNode t && t.path("timeAdded").asText("").isEmpty()) {
              t.put("timeAdded", now);
            }
          }
        }
      }
      default -> {
      }
    }
    if (!GENERATION.contains(resource.plural())) {
      metadata.remove("generation");
    } else if (previous == null) {
      metadata.put("generation", 1);
    } else {
      long before = previous.path("metadata").path("generation").asLong(1);
      metadata.put("generation", specOf(previous).equals(specOf(object)) ? before : before + 1);
    }
  }

  /** Everything but metadata and status: what a change of moves the generation on. */
  private static JsonNode specOf(JsonNode object) {
    ObjectNode copy = object.deepCopy();
    copy.remove(List.of("metadata", "status", "apiVersion", "kind"));
    return copy;
  }
}
