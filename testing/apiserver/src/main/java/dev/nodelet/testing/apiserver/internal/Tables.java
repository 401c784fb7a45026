package dev.nodelet.testing.apiserver.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.nodelet.testing.apiserver.internal.Resources.Resource;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * {@code meta.k8s.io/v1} Table answers ({@code Accept: application/json;as=Table;g=meta.k8s.io;v=v1}), with the
 * columns the API server's printers give each resource; columns of priority 1 are those of {@code -o wide}.
 */
final class Tables {

  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  private record Column(String name, String type, int priority, Function<JsonNode, Object> value) {
  }

  private Tables() {
  }

  /** True when the Accept header asks for a Table. */
  static boolean wanted(String accept) {
    if (accept == null) {
      return false;
    }
    for (String option : accept.split(",")) {
      String o = option.replace(" ", "");
      if (o.contains("as=Table") && o.contains("g=meta.k8s.io") && (o.contains("v=v1;") || o.endsWith("v=v1")
          || o.contains("v=v1beta1"))) {
        return true;
      }
    }
    return false;
  }

  /** A Table of {@code objects}; {@code includeObject} is {@code None}, {@code Metadata} (default) or {@code Object}. */
  static ObjectNode of(Resource resource, List<JsonNode> objects, String resourceVersion, String includeObject,
      boolean withColumns) {
    ObjectNode table = JSON.objectNode().put("kind", "Table").put("apiVersion", "meta.k8s.io/v1");
    ObjectNode metadata = table.putObject("metadata");
    if (resourceVersion != null) {
      metadata.put("resourceVersion", resourceVersion);
    }
    List<Column> columns = columns(resource);
    ArrayNode definitions = table.putArray("columnDefinitions");
    if (withColumns) {
      for (Column c : columns) {
        definitions.addObject().put("name", c.name()).put("type", c.type())
            .put("format", c.name().equals("Name") ? "name" : "").put("description", c.name())
            .put("priority", c.priority());
      }
    }
    ArrayNode rows = table.putArray("rows");
    String include = includeObject == null || includeObject.isEmpty() ? "Metadata" : includeObject;
    for (JsonNode object : objects) {
      ObjectNode row = rows.addObject();
      ArrayNode cells = row.putArray("cells");
      for (Column c : columns) {
        Object v = c.value().apply(object);
        if (v instanceof Integer i) {
          cells.add(i);
        } else {
          cells.add(String.valueOf(v));
        }
      }
      if (include.equals("Object")) {
        row.set("object", object);
      } else if (include.equals("Metadata")) {
        row.putObject("object").put("kind", "PartialObjectMetadata").put("apiVersion", "meta.k8s.io/v1")
            .set("metadata", object.path("metadata").deepCopy());
      }
    }
    return table;
  }

  private static List<Column> columns(Resource resource) {
    List<Column> c = new ArrayList<>();
    c.add(new Column("Name", "string", 0, o -> o.path("metadata").path("name").asText()));
    switch (resource.plural()) {
      case "pods" -> {
        c.add(new Column("Ready", "string", 0, Tables::podReady));
        c.add(new Column("Status", "string", 0, Tables::podStatus));
        c.add(new Column("Restarts", "string", 0, o -> String.valueOf(sum(o.path("status")
            .path("containerStatuses"), "restartCount"))));
        c.add(age());
        c.add(new Column("IP", "string", 1, o -> orNone(o.path("status").path("podIP").asText(""))));
        c.add(new Column("Node", "string", 1, o -> orNone(o.path("spec").path("nodeName").asText(""))));
        c.add(new Column("Nominated Node", "string", 1,
            o -> orNone(o.path("status").path("nominatedNodeName").asText(""))));
        c.add(new Column("Readiness Gates", "string", 1, o -> o.path("spec").path("readinessGates").isEmpty()
            ? "<none>" : "0/" + o.path("spec").path("readinessGates").size()));
        return c;
      }
      case "configmaps" -> c.add(new Column("Data", "integer", 0,
          o -> o.path("data").size() + o.path("binaryData").size()));
      case "secrets" -> {
        c.add(new Column("Type", "string", 0, o -> o.path("type").asText("Opaque")));
        c.add(new Column("Data", "integer", 0, o -> o.path("data").size()));
      }
      case "namespaces" -> c.add(new Column("Status", "string", 0,
          o -> o.path("status").path("phase").asText("Active")));
      case "nodes" -> {
        c.add(new Column("Status", "string", 0, Tables::nodeStatus));
        c.add(new Column("Roles", "string", 0, Tables::nodeRoles));
        c.add(age());
        c.add(new Column("Version", "string", 0,
            o -> o.path("status").path("nodeInfo").path("kubeletVersion").asText("")));
        c.add(new Column("Internal-IP", "string", 1, o -> address(o, "InternalIP")));
        c.add(new Column("External-IP", "string", 1, o -> address(o, "ExternalIP")));
        c.add(new Column("OS-Image", "string", 1, o -> info(o, "osImage")));
        c.add(new Column("Kernel-Version", "string", 1, o -> info(o, "kernelVersion")));
        c.add(new Column("Container-Runtime", "string", 1, o -> info(o, "containerRuntimeVersion")));
        return c;
      }
      case "services" -> {
        c.add(new Column("Type", "string", 0, o -> o.path("spec").path("type").asText("ClusterIP")));
        c.add(new Column("Cluster-IP", "string", 0, o -> orNone(o.path("spec").path("clusterIP").asText(""))));
        c.add(new Column("External-IP", "string", 0, o -> "<none>"));
        c.add(new Column("Port(s)", "string", 0, Tables::servicePorts));
        c.add(age());
        c.add(new Column("Selector", "string", 1, o -> selector(o.path("spec").path("selector"))));
        return c;
      }
      case "serviceaccounts" -> c.add(new Column("Secrets", "integer", 0, o -> o.path("secrets").size()));
      case "leases" -> c.add(new Column("Holder", "string", 0,
          o -> o.path("spec").path("holderIdentity").asText("")));
      case "resourceslices" -> {
        c.add(new Column("Node", "string", 0, o -> o.path("spec").path("nodeName").asText("")));
        c.add(new Column("Driver", "string", 0, o -> o.path("spec").path("driver").asText("")));
        c.add(new Column("Pool", "string", 0, o -> o.path("spec").path("pool").path("name").asText("")));
      }
      case "resourceclaims" -> c.add(new Column("State", "string", 0, o -> o.path("status").has("allocation")
          ? (o.path("status").path("reservedFor").isEmpty() ? "allocated" : "allocated,reserved") : "pending"));
      case "events" -> {
        List<Column> e = new ArrayList<>();
        e.add(new Column("Last Seen", "string", 0, o -> age(o.path("lastTimestamp").asText(
            o.path("metadata").path("creationTimestamp").asText("")))));
        e.add(new Column("Type", "string", 0, o -> o.path("type").asText("")));
        e.add(new Column("Reason", "string", 0, o -> o.path("reason").asText("")));
        e.add(new Column("Object", "string", 0, o -> o.path("involvedObject").path("kind").asText("")
            .toLowerCase(java.util.Locale.ROOT) + "/" + o.path("involvedObject").path("name").asText("")));
        e.add(new Column("Message", "string", 0, o -> o.path("message").asText("")));
        return e;
      }
      default -> {
      }
    }
    c.add(age());
    return c;
  }

  private static Column age() {
    return new Column("Age", "string", 0, o -> age(o.path("metadata").path("creationTimestamp").asText("")));
  }

  private static String age(String timestamp) {
    try {
      return human(Duration.between(Instant.parse(timestamp), Instant.now()));
    } catch (DateTimeParseException e) {
      return "<unknown>";
    }
  }

  /** As {@code apimachinery/pkg/util/duration.HumanDuration}. */
  static String human(Duration d) {
    long seconds = Math.max(0, d.getSeconds());
    if (seconds < 120) {
      return seconds + "s";
    }
    long minutes = seconds / 60;
    if (minutes < 10) {
      return seconds % 60 == 0 ? minutes + "m" : minutes + "m" + seconds % 60 + "s";
    }
    if (minutes < 180) {
      return minutes + "m";
    }
    long hours = minutes / 60;
    if (hours < 8) {
      return minutes % 60 == 0 ? hours + "h" : hours + "h" + minutes % 60 + "m";
    }
    if (hours < 48) {
      return hours + "h";
    }
    if (hours < 24 * 8) {
      return hours % 24 == 0 ? hours / 24 + "d" : hours / 24 + "d" + hours % 24 + "h";
    }
    if (hours < 24 * 365 * 2) {
      return hours / 24 + "d";
    }
    return hours / 24 / 365 + "y";
  }

  private static String podReady(JsonNode pod) {
    int total = pod.path("spec").path("containers").size();
    int ready = 0;
    for (JsonNode s : pod.path("status").path("containerStatuses")) {
      if (s.path("ready").asBoolean(false)) {
        ready++;
      }
    }
    return ready + "/" + total;
  }

  private static String podStatus(JsonNode pod) {
    if (pod.path("metadata").has("deletionTimestamp")) {
      return "Terminating";
    }
    String reason = pod.path("status").path("reason").asText("");
    for (JsonNode s : pod.path("status").path("containerStatuses")) {
      String waiting = s.path("state").path("waiting").path("reason").asText("");
      String terminated = s.path("state").path("terminated").path("reason").asText("");
      if (!waiting.isEmpty()) {
        reason = waiting;
      } else if (!terminated.isEmpty()) {
        reason = terminated;
      }
    }
    return !reason.isEmpty() ? reason : pod.path("status").path("phase").asText("Pending");
  }

  private static int sum(JsonNode list, String field) {
    int total = 0;
    for (JsonNode e : list) {
      total += e.path(field).asInt(0);
    }
    return total;
  }

  private static String nodeStatus(JsonNode node) {
    String status = "Unknown";
    for (JsonNode c : node.path("status").path("conditions")) {
      if (c.path("type").asText().equals("Ready")) {
        status = switch (c.path("status").asText()) {
          case "True" -> "Ready";
          case "False" -> "NotReady";
          default -> "Unknown";
        };
      }
    }
    return node.path("spec").path("unschedulable").asBoolean(false) ? status + ",SchedulingDisabled" : status;
  }

  private static String nodeRoles(JsonNode node) {
    List<String> roles = new ArrayList<>();
    node.path("metadata").path("labels").fieldNames().forEachRemaining(label -> {
      if (label.startsWith("node-role.kubernetes.io/")) {
        roles.add(label.substring("node-role.kubernetes.io/".length()));
      }
    });
    return roles.isEmpty() ? "<none>" : String.join(",", roles);
  }

  private static String address(JsonNode node, String type) {
    for (JsonNode a : node.path("status").path("addresses")) {
      if (a.path("type").asText().equals(type)) {
        return a.path("address").asText();
      }
    }
    return "<none>";
  }

  private static String info(JsonNode node, String field) {
    return orNone(node.path("status").path("nodeInfo").path(field).asText(""));
  }

  private static String servicePorts(JsonNode service) {
    List<String> ports = new ArrayList<>();
    for (JsonNode p : service.path("spec").path("ports")) {
      ports.add(p.path("port").asInt() + "/" + p.path("protocol").asText("TCP"));
    }
    return ports.isEmpty() ? "<none>" : String.join(",", ports);
  }

  private static String selector(JsonNode selector) {
    List<String> parts = new ArrayList<>();
    selector.fields().forEachRemaining(e -> parts.add(e.getKey() + "=" + e.getValue().asText()));
    return parts.isEmpty() ? "<none>" : String.join(",", parts);
  }

  private static String orNone(String s) {
    return s.isEmpty() ? "<none>" : s;
  }
}
