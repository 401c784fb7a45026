package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.introspect.BeanPropertyDefinition;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.nodelet.testing.apiserver.internal.Resources.Resource;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * OpenAPI v3 documents: {@code /openapi/v3} lists the group versions, {@code /openapi/v3/api/v1} and
 * {@code /openapi/v3/apis/<group>/<version>} describe their paths and schemas. The schemas are generated from the
 * fabric8 model classes, with the group-version-kind and patch merge key extensions kubectl reads; each PATCH
 * operation declares the {@code fieldValidation} parameter, which tells kubectl that the server validates fields.
 * Schemas and properties carry the Kubernetes API's descriptions ({@code kubectl explain} prints them), kept in the
 * resource {@link #DESCRIPTIONS}.
 */
final class OpenApi {

  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
  private static final Map<String, String> DOCUMENTS = new ConcurrentHashMap<>();
  /** Per schema, its description (key "") and its properties' (OpenApiDescriptionsTest writes it). */
  static final String DESCRIPTIONS = "dev/nodelet/testing/apiserver/internal/openapi-descriptions.json";
  private static volatile JsonNode descriptions;

  private OpenApi() {
  }

  /** The document at {@code path} (below {@code /openapi/v3}), or null when there is none. */
  static String document(String path) {
    if (path.isEmpty() || path.equals("/")) {
      ObjectNode root = JSON.objectNode();
      ObjectNode paths = root.putObject("paths");
      for (String gv : Resources.byGroupVersion().keySet()) {
        String key = (gv.contains("/") ? "apis/" : "api/") + gv;
        paths.putObject(key).put("serverRelativeURL", "/openapi/v3/" + key + "?hash=" + hash(gvDocument(gv)));
      }
      return root.toString();
    }
    String key = path.startsWith("/") ? path.substring(1) : path;
    String gv = key.startsWith("api/") ? key.substring(4) : key.startsWith("apis/") ? key.substring(5) : null;
    return gv != null && Resources.byGroupVersion().containsKey(gv) ? gvDocument(gv) : null;
  }

  private static String gvDocument(String groupVersion) {
    return DOCUMENTS.computeIfAbsent(groupVersion, gv -> build(gv, true));
  }

  /** The document of {@code api/v1} or {@code apis/<group>/<version>} without descriptions. */
  static String undescribed(String key) {
    return build(key.startsWith("api/") ? key.substring(4) : key.substring(5), false);
  }

  private static String build(String groupVersion, boolean describe) {
    ObjectNode doc = JSON.objectNode().put("openapi", "3.0.0");
    doc.putObject("info").put("title", "Kubernetes").put("version", Discovery.GIT_VERSION);
    ObjectNode paths = doc.putObject("paths");
    ObjectNode schemas = doc.putObject("components").putObject("schemas");
    for (Resource r : Resources.byGroupVersion().get(groupVersion)) {
      String schema = schemaName(r.type());
      define(r.type(), schemas);
      ObjectNode gvk = JSON.objectNode().put("group", r.group()).put("version", r.version()).put("kind", r.kind());
      ((ObjectNode) schemas.get(schema)).putArray("x-kubernetes-group-version-kind").add(gvk.deepCopy());
      String base = (r.group().isEmpty() ? "/api/" : "/apis/") + r.apiVersion()
          + (r.namespaced() ? "/namespaces/{namespace}/" : "/") + r.plural();
      ObjectNode collection = paths.putObject(base);
      collection.set("get", operation("list", r, gvk, schema + "List", false));
      collection.set("post", operation("post", r, gvk, schema, false));
      collection.set("delete", operation("deletecollection", r, gvk, null, false));
      ObjectNode item = paths.putObject(base + "/{name}");
      item.set("get", operation("get", r, gvk, schema, false));
      item.set("put", operation("put", r, gvk, schema, false));
      item.set("patch", operation("patch", r, gvk, schema, true));
      item.set("delete", operation("delete", r, gvk, null, false));
      for (String sub : r.subresources()) {
        ObjectNode subPath = paths.putObject(base + "/{name}/" + sub);
        subPath.set("get", operation("get", r, gvk, schema, false));
        subPath.set("put", operation("put", r, gvk, schema, false));
        subPath.set("patch", operation("patch", r, gvk, schema, true));
      }
      ObjectNode list = schemas.putObject(schema + "List").put("type", "object");
      list.putObject("properties").putObject("items").put("type", "array").putObject("items")
          .put("$ref", "#/components/schemas/" + schema);
      list.putArray("x-kubernetes-group-version-kind").add(gvk.deepCopy().put("kind", r.kind() + "List"));
    }
    if (describe) {
      describe(schemas);
    }
    return doc.toString();
  }

  private static ObjectNode operation(String action, Resource r, ObjectNode gvk, String schema, boolean patch) {
    ObjectNode op = JSON.objectNode().put("operationId", action + r.kind()).put("x-kubernetes-action", action);
    op.set("x-kubernetes-group-version-kind", gvk.deepCopy());
    ArrayNode parameters = op.putArray("parameters");
    for (String p : List.of("dryRun", "fieldManager", "fieldValidation")) {
      if (!action.equals("get") && !action.equals("list")) {
        parameters.addObject().put("name", p).put("in", "query").putObject("schema").put("type", "string")
            .put("uniqueItems", true);
      }
    }
    if (patch) {
      parameters.addObject().put("name", "force").put("in", "query").putObject("schema").put("type", "boolean");
      ObjectNode content = op.putObject("requestBody").putObject("content");
      for (String type : List.of("application/apply-patch+yaml", "application/json-patch+json",
          "application/merge-patch+json", "application/strategic-merge-patch+json")) {
        content.putObject(type).putObject("schema").put("type", "object");
      }
    }
    ObjectNode ok = op.putObject("responses").putObject("200").put("description", "OK");
    if (schema != null) {
      ok.putObject("content").putObject("application/json").putObject("schema")
          .put("$ref", "#/components/schemas/" + schema);
    }
    return op;
  }

  private static void describe(ObjectNode schemas) {
    JsonNode known = descriptions();
    for (Iterator<Map.Entry<String, JsonNode>> it = schemas.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      JsonNode described = known.path(e.getKey());
      if (described.has("")) {
        ((ObjectNode) e.getValue()).put("description", described.get("").asText());
      }
      for (Iterator<Map.Entry<String, JsonNode>> p = e.getValue().path("properties").fields(); p.hasNext(); ) {
        Map.Entry<String, JsonNode> property = p.next();
        if (described.has(property.getKey())) {
          ((ObjectNode) property.getValue()).put("description", described.get(property.getKey()).asText());
        }
      }
    }
  }

  private static JsonNode descriptions() {
    JsonNode known = descriptions;
    if (known == null) {
      try (InputStream in = OpenApi.class.getClassLoader().getResourceAsStream(DESCRIPTIONS)) {
        known = in == null ? JSON.objectNode() : Serialization.jsonMapper().readTree(in);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + DESCRIPTIONS, e);
      }
      descriptions = known;
    }
    return known;
  }

  /** Adds the schema of a model class and of every class it refers to. */
  private static void define(Class<?> type, ObjectNode schemas) {
    String name = schemaName(type);
    if (schemas.has(name)) {
      return;
    }
    ObjectNode schema = schemas.putObject(name).put("type", "object");
    ObjectNode properties = schema.putObject("properties");
    JavaType javaType = Serialization.jsonMapper().constructType(type);
    BeanDescription bean = Serialization.jsonMapper().getSerializationConfig().introspect(javaType);
    for (BeanPropertyDefinition p : bean.findProperties()) {
      if (p.getName().equals("additionalProperties")) {
        continue;
      }
      ObjectNode property = typeOf(p.getPrimaryType(), schemas);
      String mergeKey = Patches.mergeKey(p.getName(), JSON.arrayNode(), JSON.arrayNode());
      if (property.path("type").asText().equals("array") && mergeKey != null) {
        property.put("x-kubernetes-patch-merge-key", mergeKey).put("x-kubernetes-patch-strategy", "merge");
      } else if (property.path("type").asText().equals("array") && Patches.isSet(p.getName())) {
        property.put("x-kubernetes-patch-strategy", "merge");
      }
      properties.set(p.getName(), property);
    }
  }

  private static ObjectNode typeOf(JavaType type, ObjectNode schemas) {
    Class<?> raw = type.getRawClass();
    if (type.isCollectionLikeType() || type.isArrayType()) {
      ObjectNode array = JSON.objectNode().put("type", "array");
      array.set("items", typeOf(type.getContentType(), schemas));
      return array;
    }
    if (type.isMapLikeType()) {
      ObjectNode map = JSON.objectNode().put("type", "object");
      map.set("additionalProperties", typeOf(type.getContentType(), schemas));
      return map;
    }
    if (raw == String.class) {
      return JSON.objectNode().put("type", "string");
    }
    if (raw == Integer.class || raw == int.class || raw == Long.class || raw == long.class) {
      return JSON.objectNode().put("type", "integer").put("format", raw == Long.class ? "int64" : "int32");
    }
    if (raw == Boolean.class || raw == boolean.class) {
      return JSON.objectNode().put("type", "boolean");
    }
    if (raw == Double.class || raw == Float.class || raw == double.class) {
      return JSON.objectNode().put("type", "number").put("format", "double");
    }
    if (raw == IntOrString.class || raw == Quantity.class) {
      return JSON.objectNode().put("x-kubernetes-int-or-string", true);
    }
    if (KubernetesResource.class.isAssignableFrom(raw) && raw.getName().startsWith("io.fabric8.")
        && raw != io.fabric8.kubernetes.api.model.FieldsV1.class) {
      define(raw, schemas);
      return JSON.objectNode().put("$ref", "#/components/schemas/" + schemaName(raw));
    }
    return JSON.objectNode().put("x-kubernetes-preserve-unknown-fields", true);
  }

  /** {@code io.k8s.api.core.v1.Pod} for fabric8's {@code io.fabric8.kubernetes.api.model.Pod}, and so on. */
  private static String schemaName(Class<?> type) {
    String prefix = "io.fabric8.kubernetes.api.model.";
    String name = type.getName();
    if (!name.startsWith(prefix)) {
      return name;
    }
    String rest = name.substring(prefix.length());
    return rest.contains(".") ? "io.k8s.api." + rest : "io.k8s.api.core.v1." + rest;
  }

  private static String hash(String document) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-512").digest(document.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest).toUpperCase(java.util.Locale.ROOT);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
