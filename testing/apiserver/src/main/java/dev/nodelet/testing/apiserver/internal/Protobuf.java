package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.Set;

/**
 * Decodes the Kubernetes protobuf encoding ({@code application/vnd.kubernetes.protobuf}: the {@code k8s\0} prefix
 * and a {@code runtime.Unknown} envelope) of the types kubectl's generators send that way: ConfigMap, Secret,
 * Namespace and ServiceAccount. Field numbers are those of {@code k8s.io/api/core/v1/generated.proto}.
 */
final class Protobuf {

  static final String MEDIA_TYPE = "application/vnd.kubernetes.protobuf";
  static final Set<String> DECODED = Set.of("configmaps", "secrets", "namespaces", "serviceaccounts");
  private static final byte[] MAGIC = {'k', '8', 's', 0};
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  private Protobuf() {
  }

  /**
   * The object of a protobuf request body as JSON.
   *
   * @throws IllegalArgumentException when the body is not a Kubernetes protobuf message of this resource
   */
  static ObjectNode decode(String resource, byte[] body) {
    if (body.length < 4 || !Arrays.equals(Arrays.copyOf(body, 4), MAGIC)) {
      throw new IllegalArgumentException("the protobuf body does not start with the Kubernetes prefix k8s\\0");
    }
    Reader envelope = new Reader(body, 4, body.length);
    ObjectNode object = JSON.objectNode();
    byte[] raw = null;
    while (envelope.more()) {
      int tag = envelope.tag();
      switch (tag >>> 3) {
        case 1 -> {
          Reader typeMeta = envelope.message();
          while (typeMeta.more()) {
            int t = typeMeta.tag();
            switch (t >>> 3) {
              case 1 -> object.put("apiVersion", typeMeta.string());
              case 2 -> object.put("kind", typeMeta.string());
              default -> typeMeta.skip(t);
            }
          }
        }
        case 2 -> raw = envelope.bytes();
        default -> envelope.skip(tag);
      }
    }
    if (raw == null) {
      throw new IllegalArgumentException("the protobuf envelope holds no object");
    }
    Reader r = new Reader(raw, 0, raw.length);
    while (r.more()) {
      int tag = r.tag();
      int field = tag >>> 3;
      if (field == 1) {
        object.set("metadata", metadata(r.message()));
        continue;
      }
      switch (resource + ":" + field) {
        case "configmaps:2" -> entry(r.message(), object.with("data"), false);
        case "configmaps:3" -> entry(r.message(), object.with("binaryData"), true);
        case "configmaps:4", "secrets:5" -> object.put("immutable", r.varint() != 0);
        case "secrets:2" -> entry(r.message(), object.with("data"), true);
        case "secrets:3" -> object.put("type", r.string());
        case "secrets:4" -> entry(r.message(), object.with("stringData"), false);
        case "namespaces:2" -> {
          Reader spec = r.message();
          ArrayNode finalizers = object.with("spec").withArray("finalizers");
          while (spec.more()) {
            int t = spec.tag();
            if (t >>> 3 == 1) {
              finalizers.add(spec.string());
            } else {
              spec.skip(t);
            }
          }
        }
        case "serviceaccounts:2" -> object.withArray("secrets").add(reference(r.message()));
        case "serviceaccounts:3" -> object.withArray("imagePullSecrets").add(reference(r.message()));
        case "serviceaccounts:4" -> object.put("automountServiceAccountToken", r.varint() != 0);
        default -> r.skip(tag);
      }
    }
    return object;
  }

  private static ObjectNode metadata(Reader r) {
    ObjectNode m = JSON.objectNode();
    while (r.more()) {
      int tag = r.tag();
      switch (tag >>> 3) {
        case 1 -> m.put("name", r.string());
        case 2 -> m.put("generateName", r.string());
        case 3 -> m.put("namespace", r.string());
        case 5 -> m.put("uid", r.string());
        case 6 -> m.put("resourceVersion", r.string());
        case 11 -> entry(r.message(), m.with("labels"), false);
        case 12 -> entry(r.message(), m.with("annotations"), false);
        case 14 -> m.withArray("finalizers").add(r.string());
        default -> r.skip(tag);
      }
    }
    // empty strings are proto3 defaults the Go decoder leaves unset
    m.properties().removeIf(e -> e.getValue().isTextual() && e.getValue().asText().isEmpty());
    return m;
  }

  /** An ObjectReference or LocalObjectReference (name is field 3 of the first, 1 of the second). */
  private static ObjectNode reference(Reader r) {
    ObjectNode ref = JSON.objectNode();
    String[] names = {null, "kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"};
    boolean local = true;
    ObjectNode fields = JSON.objectNode();
    while (r.more()) {
      int tag = r.tag();
      int field = tag >>> 3;
      if (field >= 1 && field <= 7 && (tag & 7) == 2) {
        fields.put(String.valueOf(field), r.string());
        local &= field == 1;
      } else {
        r.skip(tag);
      }
    }
    final boolean localReference = local;
    fields.fields().forEachRemaining(e -> ref.put(localReference ? "name" : names[Integer.parseInt(e.getKey())],
        e.getValue().asText()));
    return ref;
  }

  private static void entry(Reader r, ObjectNode into, boolean bytes) {
    String key = "";
    String value = "";
    while (r.more()) {
      int tag = r.tag();
      switch (tag >>> 3) {
        case 1 -> key = r.string();
        case 2 -> value = bytes ? Base64.getEncoder().encodeToString(r.bytes()) : r.string();
        default -> r.skip(tag);
      }
    }
    into.put(key, value);
  }

  /** The protobuf wire format: varints and length-delimited fields. */
  private static final class Reader {
    private final byte[] buffer;
    private int position;
    private final int end;

    Reader(byte[] buffer, int start, int end) {
      this.buffer = buffer;
      this.position = start;
      this.end = end;
    }

    boolean more() {
      return position < end;
    }

    int tag() {
      return (int) varint();
    }

    long varint() {
      long result = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        if (position >= end) {
          throw new IllegalArgumentException("the protobuf body ends inside a varint");
        }
        byte b = buffer[position++];
        result |= (long) (b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
          return result;
        }
      }
      throw new IllegalArgumentException("the protobuf body has a malformed varint");
    }

    byte[] bytes() {
      int length = (int) varint();
      if (length < 0 || position + length > end) {
        throw new IllegalArgumentException("the protobuf body has a field longer than the message");
      }
      byte[] result = Arrays.copyOfRange(buffer, position, position + length);
      position += length;
      return result;
    }

    String string() {
      return new String(bytes(), StandardCharsets.UTF_8);
    }

    Reader message() {
      int length = (int) varint();
      if (length < 0 || position + length > end) {
        throw new IllegalArgumentException("the protobuf body has a field longer than the message");
      }
      Reader nested = new Reader(buffer, position, position + length);
      position += length;
      return nested;
    }

    void skip(int tag) {
      switch (tag & 7) {
        case 0 -> varint();
        case 1 -> position += 8;
        case 2 -> bytes();
        case 5 -> position += 4;
        default -> throw new IllegalArgumentException("the protobuf body has an unsupported wire type " + (tag & 7));
      }
    }
  }
}
