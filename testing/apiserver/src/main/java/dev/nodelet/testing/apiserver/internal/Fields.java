package dev.nodelet.testing.apiserver.internal;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.mockwebserver.crud.Attribute;
import io.fabric8.mockwebserver.crud.AttributeSet;
import io.fabric8.mockwebserver.crud.AttributeType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The field selectors the API server supports per resource, and the field attributes of stored objects that those
 * selectors match. {@code metadata.name} and {@code metadata.namespace} come from the mock server's own extractor.
 */
final class Fields {

  private static final Set<String> METADATA = Set.of("metadata.name", "metadata.namespace");

  // The selectable fields of the real API server for these resources (see each type's field label conversion).
  private static final Map<String, Set<String>> BY_RESOURCE = Map.of(
      "pods", Set.of("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
          "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"),
      "resourceslices", Set.of("spec.nodeName", "spec.driver"),
      "secrets", Set.of("type"),
      "nodes", Set.of("spec.unschedulable"),
      "namespaces", Set.of("status.phase"),
      "events", Set.of("involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
          "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
          "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"));

  private Fields() {
  }

  /** The attributes of an object's selectable fields; a missing field selects as the empty string. */
  static AttributeSet attributes(String resource, GenericKubernetesResource object) {
    List<Attribute> attributes = new ArrayList<>();
    for (String field : BY_RESOURCE.getOrDefault(resource, Set.of())) {
      attributes.add(new Attribute(field, valueOf(object.getAdditionalProperties(), field)));
    }
    return new AttributeSet(attributes);
  }

  /** The value of a selectable field in an object, or {@code null} when absent. */
  static String find(GenericKubernetesResource object, String field) {
    String value = valueOf(object.getAdditionalProperties(), field);
    return value.isEmpty() ? null : value;
  }

  private static String valueOf(Map<String, Object> properties, String field) {
    Object current = properties;
    for (String part : field.split("\\.")) {
      if (!(current instanceof Map<?, ?> map)) {
        return "";
      }
      current = map.get(part);
    }
    return current == null || current instanceof Map || current instanceof List ? "" : String.valueOf(current);
  }

  /**
   * Parses a field selector ({@code a=b,c!=d}, also {@code ==}) into query attributes.
   *
   * @throws IllegalArgumentException naming the requirement that is malformed or the field label not supported
   */
  static AttributeSet parse(String resource, String selector) {
    List<Attribute> attributes = new ArrayList<>();
    if (selector == null || selector.isBlank()) {
      return new AttributeSet(attributes);
    }
    for (String requirement : selector.split(",")) {
      String r = requirement.trim();
      int ne = r.indexOf("!=");
      int eq = r.indexOf('=');
      String key;
      String value;
      AttributeType type;
      if (ne > 0) {
        key = r.substring(0, ne);
        value = r.substring(ne + 2);
        type = AttributeType.WITHOUT;
      } else if (eq > 0) {
        key = r.substring(0, eq);
        value = r.substring(r.startsWith("=", eq + 1) ? eq + 2 : eq + 1);
        type = AttributeType.WITH;
      } else {
        throw new IllegalArgumentException("invalid field selector: '" + r + "': expected an operator");
      }
      key = key.trim();
      if (!METADATA.contains(key) && !BY_RESOURCE.getOrDefault(resource, Set.of()).contains(key)) {
        throw new IllegalArgumentException("field label not supported: " + key);
      }
      attributes.add(new Attribute(key, value.trim(), type));
    }
    return new AttributeSet(attributes);
  }
}
