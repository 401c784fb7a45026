package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.MockResponse;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;

/**
 * {@code /openapi/v2}: the definitions of every served kind, the same schemas as the OpenAPI v3 documents
 * ({@link OpenApi}), as JSON or as the protobuf (gnostic {@code openapi.v2.Document}) that client-go asks for.
 * kubectl validates what the server cannot on the client with it, such as the items of a {@code kind: List}.
 */
final class OpenApiV2 {

  /** The media type of the protobuf document, as the API server answers it (client-go asks with {@code @v1.0}). */
  static final String PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
  private static volatile ObjectNode document;

  private OpenApiV2() {
  }

  /** The document, in protobuf when {@code accept} asks for it, else JSON. */
  static MockResponse answer(String accept) {
    ObjectNode doc = document();
    if (accept != null && accept.contains("protobuf")) {
      return new MockResponse().setResponseCode(200).setHeader("Content-Type", PROTOBUF)
          .setBody(new Buffer(encodeDocument(doc)));
    }
    return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json")
        .setBody(doc.toString());
  }

  static ObjectNode document() {
    ObjectNode doc = document;
    if (doc == null) {
      doc = JSON.objectNode().put("swagger", "2.0");
      doc.putObject("info").put("title", "Kubernetes").put("version", Discovery.GIT_VERSION);
      doc.putObject("paths");
      ObjectNode definitions = doc.putObject("definitions");
      for (String gv : Resources.byGroupVersion().keySet()) {
        String path = (gv.contains("/") ? "/apis/" : "/api/") + gv;
        JsonNode schemas = Json.read(OpenApi.document(path)).path("components").path("schemas");
        for (Iterator<Map.Entry<String, JsonNode>> it = schemas.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> e = it.next();
          if (!definitions.has(e.getKey())) {
            definitions.set(e.getKey(), v2Refs(e.getValue().deepCopy()));
          } else if (e.getValue().has("x-kubernetes-group-version-kind")) {
            ((ObjectNode) definitions.get(e.getKey())).set("x-kubernetes-group-version-kind",
                e.getValue().get("x-kubernetes-group-version-kind").deepCopy());
          }
        }
      }
      document = doc;
    }
    return doc;
  }

  private static JsonNode v2Refs(JsonNode node) {
    if (node instanceof ObjectNode object) {
      for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        if (e.getKey().equals("$ref") && e.getValue().isTextual()) {
          e.setValue(TextNode.valueOf(e.getValue().asText().replace("#/components/schemas/", "#/definitions/")));
        } else {
          v2Refs(e.getValue());
        }
      }
    } else if (node.isArray()) {
      node.forEach(OpenApiV2::v2Refs);
    }
    return node;
  }

  // ---- gnostic openapi.v2 protobuf: the fields of Document, Info, Definitions, NamedSchema, Schema ----

  private static byte[] encodeDocument(ObjectNode doc) {
    Proto out = new Proto();
    out.string(1, doc.path("swagger").asText());
    out.message(2, new Proto().string(1, doc.path("info").path("title").asText())
        .string(2, doc.path("info").path("version").asText()));
    out.message(8, new Proto()); // paths: kubectl reads the definitions only
    Proto definitions = new Proto();
    for (Iterator<Map.Entry<String, JsonNode>> it = doc.path("definitions").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      definitions.message(1, new Proto().string(1, e.getKey()).message(2, schema(e.getValue())));
    }
    out.message(9, definitions);
    return out.bytes();
  }

  private static Proto schema(JsonNode schema) {
    Proto out = new Proto();
    for (Iterator<Map.Entry<String, JsonNode>> it = schema.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      JsonNode value = e.getValue();
      switch (e.getKey()) {
        case "$ref" -> out.string(1, value.asText());
        case "format" -> out.string(2, value.asText());
        case "description" -> out.string(4, value.asText());
        case "required" -> value.forEach(r -> out.string(19, r.asText()));
        case "additionalProperties" -> out.message(21, value.isBoolean()
            ? new Proto().bool(2, value.asBoolean()) : new Proto().message(1, schema(value)));
        case "type" -> out.message(22, new Proto().string(1, value.asText()));
        case "items" -> out.message(23, new Proto().message(1, schema(value)));
        case "properties" -> {
          Proto properties = new Proto();
          for (Iterator<Map.Entry<String, JsonNode>> p = value.fields(); p.hasNext(); ) {
            Map.Entry<String, JsonNode> property = p.next();
            properties.message(1, new Proto().string(1, property.getKey()).message(2, schema(property.getValue())));
          }
          out.message(25, properties);
        }
        default -> {
          if (e.getKey().startsWith("x-")) { // a vendor extension: its value as YAML (JSON is YAML)
            out.message(31, new Proto().string(1, e.getKey()).message(2, new Proto().string(2, value.toString())));
          }
        }
      }
    }
    return out;
  }

  /** A protobuf message being written: length-delimited fields and varints, all this document needs. */
  private static final class Proto {
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();

    Proto string(int field, String value) {
      return bytes(field, value.getBytes(StandardCharsets.UTF_8));
    }

    Proto message(int field, Proto message) {
      return bytes(field, message.bytes());
    }

    Proto bool(int field, boolean value) {
      varint(field << 3);
      varint(value ? 1 : 0);
      return this;
    }

    private Proto bytes(int field, byte[] value) {
      varint(field << 3 | 2);
      varint(value.length);
      buffer.writeBytes(value);
      return this;
    }

    private void varint(long value) {
      while ((value & ~0x7FL) != 0) {
        buffer.write((int) (value & 0x7F) | 0x80);
        value >>>= 7;
      }
      buffer.write((int) value);
    }

    byte[] bytes() {
      return buffer.toByteArray();
    }
  }
}
