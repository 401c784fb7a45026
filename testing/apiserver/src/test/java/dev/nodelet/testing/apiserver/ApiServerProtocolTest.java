package dev.nodelet.testing.apiserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The embedded API server over raw HTTP: what any Kubernetes client sees, byte for byte where it matters. */
class ApiServerProtocolTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

  private EmbeddedApiServer server;
  // no connect or request timeout: the server is in this JVM and answers every request, however slowly a loaded
  // machine runs it; the test timeout of junit-platform.properties bounds a hang
  // HTTP/1.1 as clients speak to a plain-HTTP API server: the JDK client's default h2c upgrade raced the server's
  // answer to a large first response (the client read JSON text as HTTP/2 frames)
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private record Answer(int code, String contentType, List<String> warnings, JsonNode body, String text) {
  }

  private Answer send(String method, String path, String contentType, String body, String accept)
      throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.url() + path))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    if (accept != null) {
      b.header("Accept", accept);
    }
    HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    String type = r.headers().firstValue("Content-Type").orElse("");
    JsonNode json = type.startsWith("application/json") ? JSON.readTree(r.body()) : null;
    return new Answer(r.statusCode(), type, r.headers().allValues("Warning"), json, r.body());
  }

  private Answer get(String path) throws IOException, InterruptedException {
    return send("GET", path, null, null, null);
  }

  private Answer post(String path, String body) throws IOException, InterruptedException {
    return send("POST", path, "application/json", body, null);
  }

  private static List<String> names(JsonNode list, String field) {
    return StreamSupport.stream(list.spliterator(), false).map(n -> n.path(field).asText()).toList();
  }

  @Test
  void discoveryDescribesEveryServedResource() throws Exception {
    Answer version = get("/version");
    assertThat(version.code()).isEqualTo(200);
    assertThat(version.body().path("gitVersion").asText()).isEqualTo("v1.34.0+nodelet");
    assertThat(version.body().path("major").asText()).isEqualTo("1");
    assertThat(version.body().path("minor").asText()).isEqualTo("34");

    Answer api = get("/api");
    assertThat(api.body().path("kind").asText()).isEqualTo("APIVersions");
    assertThat(api.body().path("versions").toString()).isEqualTo("[\"v1\"]");

    Answer apis = get("/apis");
    assertThat(apis.body().path("kind").asText()).isEqualTo("APIGroupList");
    assertThat(names(apis.body().path("groups"), "name")).contains("resource.k8s.io", "coordination.k8s.io");
    Answer group = get("/apis/resource.k8s.io");
    assertThat(group.body().path("kind").asText()).isEqualTo("APIGroup");
    assertThat(group.body().path("preferredVersion").path("groupVersion").asText()).isEqualTo("resource.k8s.io/v1");

    Answer core = get("/api/v1");
    assertThat(core.body().path("kind").asText()).isEqualTo("APIResourceList");
    assertThat(core.body().path("groupVersion").asText()).isEqualTo("v1");
    JsonNode pods = find(core.body().path("resources"), "pods");
    assertThat(pods.path("kind").asText()).isEqualTo("Pod");
    assertThat(pods.path("singularName").asText()).isEqualTo("pod");
    assertThat(pods.path("namespaced").asBoolean()).isTrue();
    assertThat(pods.path("shortNames").toString()).isEqualTo("[\"po\"]");
    assertThat(StreamSupport.stream(pods.path("verbs").spliterator(), false).map(JsonNode::asText))
        .containsExactlyInAnyOrder("create", "delete", "deletecollection", "get", "list", "patch", "update",
            "watch");
    assertThat(find(core.body().path("resources"), "pods/status").path("verbs").toString())
        .isEqualTo("[\"get\",\"patch\",\"update\"]");
    assertThat(find(core.body().path("resources"), "nodes").path("namespaced").asBoolean()).isFalse();

    Answer dra = get("/apis/resource.k8s.io/v1");
    assertThat(find(dra.body().path("resources"), "resourceslices").path("kind").asText())
        .isEqualTo("ResourceSlice");
    assertThat(find(dra.body().path("resources"), "resourceslices").path("namespaced").asBoolean()).isFalse();
  }

  private static JsonNode find(JsonNode resources, String name) {
    for (JsonNode r : resources) {
      if (r.path("name").asText().equals(name)) {
        return r;
      }
    }
    throw new AssertionError(name + " is not in " + resources);
  }

  @Test
  void unknownPathsAre404StatusesAndHealthIsOk() throws Exception {
    post("/api/v1/namespaces/default/secrets", "{\"metadata\":{\"name\":\"s\"},\"stringData\":{\"k\":\"hush\"}}");
    for (String path : List.of("/metrics", "/nope", "/api/v1/widgets", "/apis/apps/v1", "/apis/apps/v1/deployments",
        "/api/v1/namespaces/default/pods/p/log", "/openapi/v1")) {
      Answer a = get(path);
      assertThat(a.code()).as(path).isEqualTo(404);
      assertThat(a.contentType()).as(path).isEqualTo("application/json");
      assertThat(a.body().path("kind").asText()).isEqualTo("Status");
      assertThat(a.body().path("reason").asText()).isEqualTo("NotFound");
      assertThat(a.text()).doesNotContain("hush", "aHVzaA==");
    }
    for (String path : List.of("/healthz", "/livez", "/readyz")) {
      Answer a = get(path);
      assertThat(a.code()).isEqualTo(200);
      assertThat(a.text()).isEqualTo("ok");
    }
  }

  @Test
  void theNamespacesOfEveryClusterArePresent() throws Exception {
    Answer list = get("/api/v1/namespaces");
    assertThat(list.body().path("kind").asText()).isEqualTo("NamespaceList");
    List<String> names = new ArrayList<>();
    list.body().path("items").forEach(n -> names.add(n.path("metadata").path("name").asText()));
    assertThat(names).containsExactly("default", "kube-node-lease", "kube-public", "kube-system");
    assertThat(list.body().path("items").get(0).path("status").path("phase").asText()).isEqualTo("Active");
  }

  @Test
  void listsAreTypedAndPagedWithLimitAndContinue() throws Exception {
    for (int i = 0; i < 5; i++) {
      assertThat(post("/api/v1/namespaces/default/configmaps", "{\"metadata\":{\"name\":\"cm-" + i + "\"}}")
          .code()).isEqualTo(201);
    }
    Answer first = get("/api/v1/namespaces/default/configmaps?limit=2");
    assertThat(first.body().path("kind").asText()).isEqualTo("ConfigMapList");
    assertThat(first.body().path("apiVersion").asText()).isEqualTo("v1");
    assertThat(first.body().path("metadata").path("remainingItemCount").asInt()).isEqualTo(3);
    List<String> seen = new ArrayList<>();
    JsonNode page = first.body();
    int pages = 1;
    while (true) {
      page.path("items").forEach(i -> seen.add(i.path("metadata").path("name").asText()));
      String token = page.path("metadata").path("continue").asText("");
      if (token.isEmpty()) {
        break;
      }
      page = get("/api/v1/namespaces/default/configmaps?limit=2&continue=" + token).body();
      assertThat(page.path("metadata").path("resourceVersion").asText())
          .isEqualTo(first.body().path("metadata").path("resourceVersion").asText());
      pages++;
    }
    assertThat(pages).isEqualTo(3);
    assertThat(seen).containsExactly("cm-0", "cm-1", "cm-2", "cm-3", "cm-4");
    Answer bad = get("/api/v1/namespaces/default/configmaps?limit=2&continue=garbage!");
    assertThat(bad.code()).isEqualTo(400);
    assertThat(bad.body().path("reason").asText()).isEqualTo("BadRequest");
  }

  @Test
  void errorsAreStatusesWithTheApiServersReasonsAndMessages() throws Exception {
    String cm = "{\"metadata\":{\"name\":\"a\"},\"data\":{\"k\":\"v\"}}";
    Answer created = post("/api/v1/namespaces/default/configmaps", cm);
    assertThat(created.code()).isEqualTo(201);
    assertThat(created.body().path("kind").asText()).isEqualTo("ConfigMap"); // defaulted from the URL
    assertThat(created.body().path("apiVersion").asText()).isEqualTo("v1");
    assertThat(created.body().path("metadata").has("generation")).isFalse();

    Answer exists = post("/api/v1/namespaces/default/configmaps", cm);
    assertThat(exists.code()).isEqualTo(409);
    assertThat(exists.body().path("reason").asText()).isEqualTo("AlreadyExists");
    assertThat(exists.body().path("message").asText()).isEqualTo("configmaps \"a\" already exists");
    assertThat(exists.body().path("details").path("name").asText()).isEqualTo("a");
    assertThat(exists.body().path("details").path("kind").asText()).isEqualTo("configmaps");

    Answer stale = send("PUT", "/api/v1/namespaces/default/configmaps/a", "application/json",
        "{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}", null);
    assertThat(stale.code()).isEqualTo(409);
    assertThat(stale.body().path("reason").asText()).isEqualTo("Conflict");
    assertThat(stale.body().path("message").asText()).isEqualTo("Operation cannot be fulfilled on configmaps \"a\": "
        + "the object has been modified; please apply your changes to the latest version and try again");

    Answer missing = get("/apis/resource.k8s.io/v1/resourceslices/nope");
    assertThat(missing.code()).isEqualTo(404);
    assertThat(missing.body().path("message").asText()).isEqualTo("resourceslices.resource.k8s.io \"nope\" not found");
    assertThat(missing.body().path("details").path("group").asText()).isEqualTo("resource.k8s.io");

    Answer invalid = post("/api/v1/namespaces/default/configmaps", "{\"metadata\":{\"name\":\"Bad_Name\"}}");
    assertThat(invalid.code()).isEqualTo(422);
    assertThat(invalid.body().path("reason").asText()).isEqualTo("Invalid");
    assertThat(invalid.body().path("message").asText()).startsWith("ConfigMap \"Bad_Name\" is invalid: "
        + "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of");
    assertThat(invalid.body().path("details").path("causes").get(0).path("field").asText())
        .isEqualTo("metadata.name");
    Answer badNamespace = post("/api/v1/namespaces", "{\"metadata\":{\"name\":\"a.b\"}}");
    assertThat(badNamespace.code()).isEqualTo(422);
    assertThat(badNamespace.body().path("message").asText()).contains("a lowercase RFC 1123 label");

    Answer wrongKind = post("/api/v1/namespaces/default/configmaps",
        "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"x\"}}");
    assertThat(wrongKind.code()).isEqualTo(400);
    assertThat(wrongKind.body().path("message").asText())
        .isEqualTo("the kind in the data (Secret) does not match the expected kind (ConfigMap)");

    Answer protobufPod = send("POST", "/api/v1/namespaces/default/pods", "application/vnd.kubernetes.protobuf",
        "k8s\0garbage", null);
    assertThat(protobufPod.code()).isEqualTo(415);
    assertThat(protobufPod.body().path("reason").asText()).isEqualTo("UnsupportedMediaType");
    Answer xml = send("POST", "/api/v1/namespaces/default/configmaps", "application/xml", "<a/>", null);
    assertThat(xml.code()).isEqualTo(415);

    Answer postOnObject = post("/api/v1/namespaces/default/configmaps/a", cm);
    assertThat(postOnObject.code()).isEqualTo(405);
    assertThat(postOnObject.body().path("reason").asText()).isEqualTo("MethodNotAllowed");
  }

  @Test
  void writesAnswerAsTheApiServerDoes() throws Exception {
    post("/api/v1/namespaces/default/configmaps", "{\"metadata\":{\"name\":\"a\"},\"data\":{\"k\":\"v\"}}");
    Answer patched = send("PATCH", "/api/v1/namespaces/default/configmaps/a", "application/merge-patch+json",
        "{\"data\":{\"k\":null,\"n\":\"1\"}}", null);
    assertThat(patched.code()).isEqualTo(200);
    assertThat(patched.body().path("data").toString()).isEqualTo("{\"n\":\"1\"}");
    Answer patchedUnknown = send("PATCH", "/api/v1/namespaces/default/configmaps/nope",
        "application/merge-patch+json", "{}", null);
    assertThat(patchedUnknown.code()).isEqualTo(404);

    Answer deleted = send("DELETE", "/api/v1/namespaces/default/configmaps/a", null, null, null);
    assertThat(deleted.code()).isEqualTo(200);
    assertThat(deleted.body().path("kind").asText()).isEqualTo("Status");
    assertThat(deleted.body().path("status").asText()).isEqualTo("Success");
    assertThat(deleted.body().path("details").path("name").asText()).isEqualTo("a");
    assertThat(deleted.body().path("details").path("uid").asText())
        .isEqualTo(patched.body().path("metadata").path("uid").asText());

    post("/api/v1/namespaces/default/pods", "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":"
        + "[{\"name\":\"c\",\"image\":\"i\"}]}}");
    Answer deletedPod = send("DELETE", "/api/v1/namespaces/default/pods/p", null, null, null);
    assertThat(deletedPod.code()).isEqualTo(200);
    assertThat(deletedPod.body().path("kind").asText()).isEqualTo("Pod");

    post("/api/v1/namespaces/default/configmaps", "{\"metadata\":{\"name\":\"held\",\"finalizers\":[\"x.io/f\"]}}");
    Answer pending = send("DELETE", "/api/v1/namespaces/default/configmaps/held", null, null, null);
    assertThat(pending.code()).isEqualTo(202);
    assertThat(pending.body().path("metadata").has("deletionTimestamp")).isTrue();
  }

  @Test
  void serverDefaultsAreFilledIn() throws Exception {
    Answer secret = post("/api/v1/namespaces/default/secrets",
        "{\"metadata\":{\"name\":\"s\"},\"stringData\":{\"user\":\"admin\"},\"data\":{\"x\":\"eA==\"}}");
    assertThat(secret.body().path("type").asText()).isEqualTo("Opaque");
    assertThat(secret.body().has("stringData")).isFalse();
    assertThat(secret.body().path("data").path("user").asText())
        .isEqualTo(Base64.getEncoder().encodeToString("admin".getBytes(StandardCharsets.UTF_8)));
    assertThat(secret.body().path("data").path("x").asText()).isEqualTo("eA==");

    Answer slice = post("/apis/resource.k8s.io/v1/resourceslices", "{\"metadata\":{\"name\":\"s\"},\"spec\":{"
        + "\"driver\":\"d.example.com\",\"nodeName\":\"n\",\"pool\":{\"name\":\"p\",\"generation\":1,"
        + "\"resourceSliceCount\":1},\"devices\":[{\"name\":\"d0\",\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\"},"
        + "{\"key\":\"old\",\"effect\":\"NoSchedule\",\"timeAdded\":\"2020-01-01T00:00:00Z\"}]}]}}");
    JsonNode taints = slice.body().path("spec").path("devices").get(0).path("taints");
    assertThat(taints.get(0).path("timeAdded").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ");
    assertThat(taints.get(1).path("timeAdded").asText()).isEqualTo("2020-01-01T00:00:00Z");
    assertThat(slice.body().path("metadata").path("generation").asLong()).isEqualTo(1);

    // metadata.generation moves on spec changes only
    Answer labelled = send("PATCH", "/apis/resource.k8s.io/v1/resourceslices/s", "application/merge-patch+json",
        "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}", null);
    assertThat(labelled.body().path("metadata").path("generation").asLong()).isEqualTo(1);
    Answer changed = send("PATCH", "/apis/resource.k8s.io/v1/resourceslices/s", "application/merge-patch+json",
        "{\"spec\":{\"pool\":{\"generation\":2}}}", null);
    assertThat(changed.body().path("metadata").path("generation").asLong()).isEqualTo(2);

    Answer pod = post("/api/v1/namespaces/default/pods", "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":"
        + "[{\"name\":\"c\",\"image\":\"i\"}]}}");
    assertThat(pod.body().path("status").path("phase").asText()).isEqualTo("Pending");
  }

  @Test
  void dryRunWritesNothingAndUsesNoResourceVersion() throws Exception {
    post("/api/v1/namespaces/default/configmaps", "{\"metadata\":{\"name\":\"wet\"},\"data\":{\"k\":\"v\"}}");
    long before = server.resourceVersion();
    HttpRequest watchRequest = HttpRequest.newBuilder(URI.create(server.url()
        + "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=" + before)).build();
    HttpResponse<InputStream> watch = http.send(watchRequest, HttpResponse.BodyHandlers.ofInputStream());

    Answer dry = post("/api/v1/namespaces/default/configmaps?dryRun=All",
        "{\"metadata\":{\"name\":\"dry\"},\"data\":{\"k\":\"v\"}}");
    assertThat(dry.code()).isEqualTo(201);
    assertThat(dry.body().path("data").path("k").asText()).isEqualTo("v");
    assertThat(dry.body().path("metadata").has("uid")).isTrue();
    assertThat(dry.body().path("metadata").has("resourceVersion")).as("nothing was stored").isFalse();
    assertThat(get("/api/v1/namespaces/default/configmaps/dry").code()).isEqualTo(404);
    Answer patched = send("PATCH", "/api/v1/namespaces/default/configmaps/wet?dryRun=All",
        "application/merge-patch+json", "{\"data\":{\"k\":\"changed\"}}", null);
    assertThat(patched.body().path("data").path("k").asText()).isEqualTo("changed");
    assertThat(patched.body().path("metadata").path("resourceVersion").asLong()).isEqualTo(before);
    Answer put = send("PUT", "/api/v1/namespaces/default/configmaps/wet?dryRun=All", "application/json",
        "{\"metadata\":{\"name\":\"wet\"},\"data\":{\"k\":\"put\"}}", null);
    assertThat(put.code()).isEqualTo(200);
    assertThat(put.body().path("metadata").path("resourceVersion").asLong()).isEqualTo(before);
    // DeleteOptions in the body, as kubectl delete --dry-run=server and fabric8 send them
    Answer deleted = send("DELETE", "/api/v1/namespaces/default/configmaps/wet", "application/json",
        "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"dryRun\":[\"All\"]}", null);
    assertThat(deleted.code()).isEqualTo(200);
    assertThat(deleted.body().path("status").asText()).isEqualTo("Success");
    send("DELETE", "/api/v1/namespaces/default/configmaps/wet?dryRun=All", null, null, null);
    send("DELETE", "/api/v1/namespaces/default/configmaps?dryRun=All", null, null, null);
    assertThat(get("/api/v1/namespaces/default/configmaps/wet").body().path("data").path("k").asText())
        .isEqualTo("v");
    assertThat(server.resourceVersion()).isEqualTo(before);

    // the next real write takes the next resourceVersion, and it is the first event the watch sees
    Answer next = post("/api/v1/namespaces/default/configmaps", "{\"metadata\":{\"name\":\"next\"}}");
    assertThat(next.body().path("metadata").path("resourceVersion").asLong()).isEqualTo(before + 1);
    try (BufferedReader lines = new BufferedReader(new InputStreamReader(watch.body(), StandardCharsets.UTF_8))) {
      JsonNode event = JSON.readTree(lines.readLine());
      assertThat(event.path("type").asText()).isEqualTo("ADDED");
      assertThat(event.path("object").path("metadata").path("name").asText()).isEqualTo("next");
    }

    assertThat(post("/api/v1/namespaces/default/configmaps?dryRun=Some", "{\"metadata\":{\"name\":\"x\"}}").code())
        .isEqualTo(400);
    Answer badBody = send("DELETE", "/api/v1/namespaces/default/configmaps/wet", "application/json",
        "{\"dryRun\":[\"Some\"]}", null);
    assertThat(badBody.code()).isEqualTo(400);
    assertThat(badBody.body().path("message").asText())
        .isEqualTo("dryRun: Unsupported value: \"Some\": supported values: \"All\"");
  }

  @Test
  void fieldValidationIsStrictWarnOrIgnore() throws Exception {
    String body = "{\"metadata\":{\"name\":\"%s\"},\"data\":{\"k\":\"v\"},\"spec\":{\"oops\":1}}";
    Answer strict = post("/api/v1/namespaces/default/configmaps?fieldValidation=Strict", body.formatted("a"));
    assertThat(strict.code()).isEqualTo(400);
    assertThat(strict.body().path("message").asText()).isEqualTo("strict decoding error: unknown field \"spec\"");
    Answer warn = post("/api/v1/namespaces/default/configmaps?fieldValidation=Warn", body.formatted("b"));
    assertThat(warn.code()).isEqualTo(201);
    assertThat(warn.warnings()).containsExactly("299 - \"unknown field \\\"spec\\\"\"");
    Answer ignore = post("/api/v1/namespaces/default/configmaps?fieldValidation=Ignore", body.formatted("c"));
    assertThat(ignore.code()).isEqualTo(201);
    assertThat(ignore.warnings()).isEmpty();
    Answer nested = post("/api/v1/namespaces/default/pods?fieldValidation=Strict", "{\"metadata\":{\"name\":\"p\"},"
        + "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"imagee\":\"typo\"}]}}");
    assertThat(nested.body().path("message").asText())
        .isEqualTo("strict decoding error: unknown field \"spec.containers[0].imagee\"");
  }

  @Test
  void tablesCarryTheColumnsOfKubectlGet() throws Exception {
    post("/api/v1/namespaces/default/pods", "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n1\","
        + "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]},\"status\":{\"phase\":\"Running\",\"podIP\":\"10.0.0.9\","
        + "\"containerStatuses\":[{\"name\":\"c\",\"ready\":true,\"restartCount\":2}]}}");
    Answer table = send("GET", "/api/v1/namespaces/default/pods", null, null, TABLE);
    assertThat(table.body().path("kind").asText()).isEqualTo("Table");
    assertThat(table.body().path("apiVersion").asText()).isEqualTo("meta.k8s.io/v1");
    List<String> columns = new ArrayList<>();
    table.body().path("columnDefinitions").forEach(c -> columns.add(c.path("name").asText()
        + (c.path("priority").asInt() == 1 ? "*" : "")));
    assertThat(columns).containsExactly("Name", "Ready", "Status", "Restarts", "Age", "IP*", "Node*",
        "Nominated Node*", "Readiness Gates*");
    JsonNode row = table.body().path("rows").get(0);
    assertThat(row.path("cells").get(0).asText()).isEqualTo("p");
    assertThat(row.path("cells").get(1).asText()).isEqualTo("1/1");
    assertThat(row.path("cells").get(2).asText()).isEqualTo("Running");
    assertThat(row.path("cells").get(3).asText()).isEqualTo("2");
    assertThat(row.path("cells").get(5).asText()).isEqualTo("10.0.0.9");
    assertThat(row.path("cells").get(6).asText()).isEqualTo("n1");
    assertThat(row.path("object").path("kind").asText()).isEqualTo("PartialObjectMetadata");
    assertThat(row.path("object").path("metadata").path("name").asText()).isEqualTo("p");

    Answer one = send("GET", "/api/v1/namespaces/default/pods/p?includeObject=Object", null, null, TABLE);
    assertThat(one.body().path("rows").get(0).path("object").path("kind").asText()).isEqualTo("Pod");
    Answer plain = get("/api/v1/namespaces/default/pods/p");
    assertThat(plain.body().path("kind").asText()).isEqualTo("Pod");
  }

  @Test
  void aWatchAsksForTablesAndGetsTableRows() throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create(server.url()
        + "/api/v1/namespaces/default/configmaps?watch=true")).header("Accept", TABLE).build();
    HttpResponse<InputStream> response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
    post("/api/v1/namespaces/default/configmaps", "{\"metadata\":{\"name\":\"w\"},\"data\":{\"a\":\"1\",\"b\":\"2\"}}");
    try (BufferedReader lines = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
      JsonNode event = JSON.readTree(lines.readLine());
      assertThat(event.path("type").asText()).isEqualTo("ADDED");
      assertThat(event.path("object").path("kind").asText()).isEqualTo("Table");
      assertThat(event.path("object").path("columnDefinitions").get(1).path("name").asText()).isEqualTo("Data");
      assertThat(event.path("object").path("rows").get(0).path("cells").get(1).asInt()).isEqualTo(2);
    }
  }

  @Test
  void openApiV3DescribesTheGroupVersionsWithFieldValidation() throws Exception {
    Answer root = get("/openapi/v3");
    String url = root.body().path("paths").path("api/v1").path("serverRelativeURL").asText();
    assertThat(url).startsWith("/openapi/v3/api/v1?hash=");
    assertThat(root.body().path("paths").has("apis/resource.k8s.io/v1")).isTrue();
    Answer doc = get(url);
    JsonNode patch = doc.body().path("paths").path("/api/v1/namespaces/{namespace}/pods/{name}").path("patch");
    assertThat(patch.path("x-kubernetes-group-version-kind").path("kind").asText()).isEqualTo("Pod");
    assertThat(names(patch.path("parameters"), "name")).contains("fieldValidation", "fieldManager", "dryRun");
    JsonNode pod = doc.body().path("components").path("schemas").path("io.k8s.api.core.v1.Pod");
    assertThat(pod.path("properties").path("spec").path("$ref").asText())
        .isEqualTo("#/components/schemas/io.k8s.api.core.v1.PodSpec");
    JsonNode containers = doc.body().path("components").path("schemas").path("io.k8s.api.core.v1.PodSpec")
        .path("properties").path("containers");
    assertThat(containers.path("x-kubernetes-patch-merge-key").asText()).isEqualTo("name");
    assertThat(get("/openapi/v3/apis/apps/v1").code()).isEqualTo(404);
  }

  @Test
  void aChunkedBodyWithoutContentTypeIsReadAsJson() throws Exception {
    // as kubectl create --raw -f FILE sends it: no Content-Type, no Content-Length (chunked over HTTP/1.1)
    byte[] body = "{\"metadata\":{\"name\":\"raw\"},\"data\":{\"k\":\"v\"}}".getBytes(StandardCharsets.UTF_8);
    HttpResponse<String> r = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build().send(
        HttpRequest.newBuilder(URI.create(server.url() + "/api/v1/namespaces/default/configmaps"))
            .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(body))).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
    assertThat(get("/api/v1/namespaces/default/configmaps/raw").body().path("data").path("k").asText())
        .isEqualTo("v");
  }

  @Test
  void openApiV2DefinesEveryKindInJsonAndProtobuf() throws Exception {
    Answer json = get("/openapi/v2");
    assertThat(json.code()).isEqualTo(200);
    JsonNode configMap = json.body().path("definitions").path("io.k8s.api.core.v1.ConfigMap");
    assertThat(configMap.path("x-kubernetes-group-version-kind").get(0).path("kind").asText()).isEqualTo("ConfigMap");
    assertThat(configMap.path("properties").path("metadata").path("$ref").asText())
        .isEqualTo("#/definitions/io.k8s.api.core.v1.ObjectMeta");
    assertThat(json.body().path("definitions").has("io.k8s.api.resource.v1.ResourceSlice")).isTrue();
    HttpResponse<byte[]> proto = http.send(HttpRequest.newBuilder(URI.create(server.url() + "/openapi/v2"))
        .header("Accept", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf").build(),
        HttpResponse.BodyHandlers.ofByteArray());
    assertThat(proto.headers().firstValue("Content-Type"))
        .hasValue("application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
    // openapi.v2.Document: field 1, swagger = "2.0"
    assertThat(java.util.Arrays.copyOf(proto.body(), 5)).isEqualTo(new byte[] {0x0a, 3, '2', '.', '0'});
  }

  @Test
  void protobufBodiesOfTheTypesKubectlSendsSoAreDecoded() throws Exception {
    // a ConfigMap as kubectl create configmap sends it: k8s\0 + runtime.Unknown{typeMeta, raw}
    byte[] metadata = field(1, "proto".getBytes(StandardCharsets.UTF_8));
    byte[] entry = concat(field(1, "k".getBytes(StandardCharsets.UTF_8)), field(2, "v".getBytes(StandardCharsets.UTF_8)));
    byte[] raw = concat(field(1, metadata), field(2, entry));
    byte[] typeMeta = concat(field(1, "v1".getBytes(StandardCharsets.UTF_8)),
        field(2, "ConfigMap".getBytes(StandardCharsets.UTF_8)));
    byte[] body = concat("k8s\0".getBytes(StandardCharsets.UTF_8), field(1, typeMeta), field(2, raw));
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(server.url()
            + "/api/v1/namespaces/default/configmaps")).header("Content-Type", "application/vnd.kubernetes.protobuf")
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(201);
    JsonNode stored = get("/api/v1/namespaces/default/configmaps/proto").body();
    assertThat(stored.path("data").path("k").asText()).isEqualTo("v");
  }

  private static byte[] field(int number, byte[] value) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(number << 3 | 2);
    int length = value.length;
    while (length >= 0x80) {
      out.write(length & 0x7f | 0x80);
      length >>>= 7;
    }
    out.write(length);
    out.writeBytes(value);
    return out.toByteArray();
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  @Test
  void invalidNamesAreStoredWhenTheBuilderSaysSo() throws Exception {
    try (EmbeddedApiServer lenient = EmbeddedApiServer.builder().acceptInvalidNames().build().start()) {
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(lenient.url()
          + "/api/v1/namespaces/default/configmaps")).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"metadata\":{\"name\":\"Bad_Name\"}}")).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(201);
    }
  }

  @Test
  void aDisabledFeatureGateDropsTheFieldsItGuardsUnlessTheStoredObjectUsesThem() throws Exception {
    assertThatThrownBy(() -> EmbeddedApiServer.builder().disableFeatureGates("DRANoSuchGate"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown feature gate \"DRANoSuchGate\"").hasMessageContaining("DRADeviceTaints");
    try (EmbeddedApiServer gated = EmbeddedApiServer.builder()
        .disableFeatureGates("DRAPartitionableDevices", "DRADeviceBindingConditions").build().start()) {
      String slice = "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"driver\":\"d.example.com\",\"nodeName\":\"n\","
          + "\"pool\":{\"name\":\"p\",\"generation\":1,\"resourceSliceCount\":1},\"devices\":[{\"name\":\"d0\","
          + "\"bindsToNode\":true,\"taints\":[{\"key\":\"k\",\"effect\":\"NoSchedule\"}],"
          + "\"consumesCounters\":[{\"counterSet\":\"c\",\"counters\":{\"m\":{\"value\":\"1\"}}}]}]}}";
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(gated.url()
          + "/apis/resource.k8s.io/v1/resourceslices")).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(slice)).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(201);
      JsonNode device = new ObjectMapper().readTree(r.body())
          .path("spec").path("devices").get(0);
      assertThat(device.has("consumesCounters")).isFalse();
      assertThat(device.has("bindsToNode")).isFalse();
      assertThat(device.path("taints").get(0).path("timeAdded").asText()).isNotEmpty();
    }
  }
}
