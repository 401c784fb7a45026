package dev.nodelet.testing.apiserver.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.swagger.annotations.ApiModel;
import io.swagger.annotations.ApiModelProperty;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The field descriptions that the OpenAPI documents carry ({@code kubectl explain} prints them) come from the
 * official Java client's model classes, which hold the Kubernetes API's own descriptions; they are kept in a
 * resource so that the server needs no such dependency. This test fails when the resource is stale, and rewrites
 * it when run with {@code -Dnodelet.regenerate=true}.
 */
class OpenApiDescriptionsTest {

  private static final Path RESOURCE = Path.of("src/main/resources", OpenApi.DESCRIPTIONS);
  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  @Test
  void theDescriptionsResourceMatchesTheOfficialModels() throws Exception {
    Map<String, Map<String, String>> generated = generate();
    String text = JSON.writeValueAsString(generated) + "\n";
    if (Boolean.getBoolean("nodelet.regenerate")) {
      Files.writeString(RESOURCE, text);
    }
    assertThat(generated.get("io.k8s.api.core.v1.ConfigMap").get("data")).startsWith("Data contains the "
        + "configuration data.");
    assertThat(Files.readString(RESOURCE)).as("%s is stale: run this test with -Dnodelet.regenerate=true",
        RESOURCE).isEqualTo(text);
  }

  /** Per schema of the v3 documents (without descriptions), its description ("") and its properties'. */
  private static Map<String, Map<String, String>> generate() throws Exception {
    Map<String, Map<String, String>> out = new TreeMap<>();
    for (String gv : Resources.byGroupVersion().keySet()) {
      JsonNode schemas = Json.read(OpenApi.undescribed((gv.contains("/") ? "apis/" : "api/") + gv))
          .path("components").path("schemas");
      for (Iterator<Map.Entry<String, JsonNode>> it = schemas.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        Class<?> official = official(e.getKey());
        if (official == null || out.containsKey(e.getKey())) {
          continue;
        }
        Map<String, String> descriptions = new TreeMap<>();
        ApiModel model = official.getAnnotation(ApiModel.class);
        if (model != null && !model.description().isEmpty()) {
          descriptions.put("", model.description());
        }
        for (Field f : official.getDeclaredFields()) {
          com.google.gson.annotations.SerializedName name = f.getAnnotation(
              com.google.gson.annotations.SerializedName.class);
          String description = name == null ? null : getterDescription(official, f.getName());
          if (description != null && e.getValue().path("properties").has(name.value())) {
            descriptions.put(name.value(), description);
          }
        }
        if (!descriptions.isEmpty()) {
          out.put(e.getKey(), descriptions);
        }
      }
    }
    return out;
  }

  private static String getterDescription(Class<?> type, String field) {
    String suffix = Character.toUpperCase(field.charAt(0)) + field.substring(1);
    for (String prefix : List.of("get", "is")) {
      try {
        Method getter = type.getMethod(prefix + suffix);
        ApiModelProperty property = getter.getAnnotation(ApiModelProperty.class);
        if (property != null && !property.value().isEmpty()) {
          return property.value();
        }
      } catch (NoSuchMethodException e) {
        // try the next prefix
      }
    }
    return null;
  }

  /** The official model of a schema: io.k8s.api.core.v1.Pod is V1Pod; a group's newest beta if no v1. */
  private static Class<?> official(String schema) {
    String[] parts = schema.split("\\.");
    if (parts.length < 3) {
      return null;
    }
    String kind = parts[parts.length - 1];
    String version = parts[parts.length - 2];
    List<String> versions = version.equals("v1") ? List.of("V1", "V1beta2", "V1beta1")
        : List.of(Character.toUpperCase(version.charAt(0)) + version.substring(1));
    for (String v : versions) {
      try {
        return Class.forName("io.kubernetes.client.openapi.models." + v + kind);
      } catch (ClassNotFoundException e) {
        // the next
      }
    }
    return null;
  }
}
