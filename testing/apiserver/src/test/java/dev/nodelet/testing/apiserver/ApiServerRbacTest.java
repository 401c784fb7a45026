package dev.nodelet.testing.apiserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bearer tokens and RBAC rules: what a limited client may do, and the 401 and 403 answers of the API server. */
class ApiServerRbacTest {

  private static final String TOKEN = "reader-token";
  private static final String USER = "system:serviceaccount:test:reader";
  private static final String NS = "test";

  private EmbeddedApiServer server;
  private KubernetesClient admin;

  @BeforeEach
  void seed() {
    start(List.of(
        rule("", "configmaps", "get", "list", "watch"),
        new PolicyRuleBuilder().withApiGroups("").withResources("secrets").withVerbs("get")
            .withResourceNames("allowed").build(),
        rule("resource.k8s.io", "resourceslices", "list", "watch", "create"),
        rule("", "pods/status", "update")));
    for (String name : List.of("a", "b")) {
      admin.configMaps().inNamespace(NS).resource(new ConfigMapBuilder().withNewMetadata().withName(name)
          .endMetadata().build()).create();
    }
  }

  private void start(List<PolicyRule> rules) {
    server = EmbeddedApiServer.builder().authorize(TOKEN, USER, rules).build().start();
    admin = server.newClient();
  }

  @AfterEach
  void stop() {
    admin.close();
    server.close();
  }

  private static PolicyRule rule(String group, String resource, String... verbs) {
    return new PolicyRuleBuilder().withApiGroups(group).withResources(resource).withVerbs(verbs).build();
  }

  @Test
  void aClientWithTheTokenMayDoWhatItsRulesAllowAndNothingElse() {
    try (KubernetesClient client = server.newClient(TOKEN)) {
      assertThat(client.configMaps().inNamespace(NS).list().getItems()).hasSize(2);
      assertThat(client.configMaps().inNamespace(NS).withName("a").get()).isNotNull();

      KubernetesClientException denied = forbidden(() -> client.configMaps().inNamespace(NS)
          .resource(new ConfigMapBuilder().withNewMetadata().withName("c").endMetadata().build()).create());
      assertThat(denied.getStatus().getMessage()).isEqualTo("configmaps is forbidden: User \"" + USER
          + "\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"test\"");
      assertThat(denied.getStatus().getReason()).isEqualTo("Forbidden");
      assertThat(denied.getStatus().getDetails().getKind()).isEqualTo("configmaps");
      assertThat(admin.configMaps().inNamespace(NS).withName("c").get()).isNull();

      assertThat(forbidden(() -> client.configMaps().inNamespace(NS).withName("a").delete()).getMessage())
          .contains("configmaps \"a\" is forbidden: User \"" + USER + "\" cannot delete resource \"configmaps\"");
      assertThat(forbidden(() -> client.nodes().list()).getStatus().getMessage())
          .isEqualTo("nodes is forbidden: User \"" + USER
              + "\" cannot list resource \"nodes\" in API group \"\" at the cluster scope");
      assertThat(forbidden(() -> client.resources(ResourceSlice.class).withName("s").delete())
          .getStatus().getMessage()).isEqualTo("resourceslices.resource.k8s.io \"s\" is forbidden: User \"" + USER
              + "\" cannot delete resource \"resourceslices\" in API group \"resource.k8s.io\" at the cluster scope");
      assertThat(client.resources(ResourceSlice.class).resource(new ResourceSliceBuilder().withNewMetadata()
          .withName("s").endMetadata().withNewSpec().withDriver("d").withNodeName("n").withNewPool().withName("p")
          .withGeneration(1L).withResourceSliceCount(1L).endPool().endSpec().build()).create()).isNotNull();
    }
    assertThat(server.deniedRequests()).extracting(DeniedRequest::status, DeniedRequest::verb,
        DeniedRequest::resource, DeniedRequest::namespace, DeniedRequest::name).containsExactly(
            tuple(403, Verb.CREATE, "configmaps", NS, null),
            tuple(403, Verb.DELETE, "configmaps", NS, "a"),
            tuple(403, Verb.LIST, "nodes", null, null),
            tuple(403, Verb.DELETE, "resourceslices", null, "s"));
    assertThat(server.deniedRequests()).allSatisfy(d -> assertThat(d.user()).isEqualTo(USER));
    // a denied write is recorded with its status, and nothing else happened
    assertThat(server.writes()).extracting(RecordedWrite::verb, RecordedWrite::status).contains(
        tuple(Verb.CREATE, 403), tuple(Verb.CREATE, 201));
    server.clearDeniedRequests();
    assertThat(server.deniedRequests()).isEmpty();
  }

  @Test
  void resourceNamesAllowOnlyTheNamedObjectAlsoForAListOrWatchOfThatName() throws Exception {
    admin.secrets().inNamespace(NS).resource(new SecretBuilder().withNewMetadata()
        .withName("allowed").endMetadata().build()).create();
    try (KubernetesClient client = server.newClient(TOKEN)) {
      assertThat(client.secrets().inNamespace(NS).withName("allowed").get()).isNotNull();
      assertThat(forbidden(() -> client.secrets().inNamespace(NS).withName("other").get()).getMessage())
          .contains("secrets \"other\" is forbidden");
      // the rule has no list verb: a list of that one name is still a list
      assertThat(forbidden(() -> client.secrets().inNamespace(NS).withField("metadata.name", "allowed").list())
          .getMessage()).contains("secrets \"allowed\" is forbidden: User \"" + USER + "\" cannot list");
    }
    server.close();
    admin.close();
    start(List.of(new PolicyRuleBuilder().withApiGroups("").withResources("configmaps")
        .withVerbs("list", "watch").withResourceNames("a").build()));
    try (KubernetesClient client = server.newClient(TOKEN)) {
      assertThat(client.configMaps().inNamespace(NS).withField("metadata.name", "a").list().getItems()).isEmpty();
      assertThat(forbidden(() -> client.configMaps().inNamespace(NS).list()).getMessage())
          .contains("configmaps is forbidden");
      // an informer on one object lists and watches with metadata.name=<name>
      SharedIndexInformer<ConfigMap> informer =
          client.configMaps().inNamespace(NS).withName("a").inform();
      try {
        informer.start().toCompletableFuture().get(10, TimeUnit.SECONDS);
        admin.configMaps().inNamespace(NS).resource(new ConfigMapBuilder().withNewMetadata().withName("a")
            .endMetadata().build()).create();
        await().atMost(Duration.ofSeconds(10))
            .until(() -> informer.getStore().list().size() == 1);
      } finally {
        informer.close();
      }
    }
    assertThat(server.deniedRequests()).extracting(DeniedRequest::verb).containsExactly(Verb.LIST);
  }

  @Test
  void subresourcesAreRulesOfTheirOwn() throws Exception {
    admin.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("p").endMetadata()
        .withNewSpec().addNewContainer().withName("c").withImage("busybox").endContainer().endSpec().build())
        .create();
    HttpResponse<String> pod = send("PUT", "/api/v1/namespaces/test/pods/p", TOKEN);
    assertThat(pod.statusCode()).isEqualTo(403);
    assertThat(pod.body()).contains("pods \\\"p\\\" is forbidden: User \\\"" + USER
        + "\\\" cannot update resource \\\"pods\\\" in API group \\\"\\\" in the namespace \\\"test\\\"");
    assertThat(send("PUT", "/api/v1/namespaces/test/pods/p/status", TOKEN).statusCode()).isNotIn(401, 403);
    HttpResponse<String> ephemeral = send("PUT", "/api/v1/namespaces/test/pods/p/ephemeralcontainers", TOKEN);
    assertThat(ephemeral.statusCode()).isEqualTo(403);
    assertThat(ephemeral.body()).contains("cannot update resource \\\"pods/ephemeralcontainers\\\"");
  }

  @Test
  void aDeniedWatchFailsOverWebSocketAndOverHttp() throws Exception {
    try (KubernetesClient client = server.newClient(TOKEN)) {
      // the JDK's WebSocket client does not hand the body of a failed upgrade to fabric8: only the code
      forbidden(() -> client.pods().inNamespace(NS).watch(new Recorder<>()));
    }
    HttpResponse<String> http = send("GET", "/api/v1/namespaces/test/pods?watch=true", TOKEN);
    assertThat(http.statusCode()).isEqualTo(403);
    assertThat(http.body()).contains("pods is forbidden: User \\\"" + USER + "\\\" cannot watch resource");
    assertThat(server.deniedRequests()).extracting(DeniedRequest::verb).containsExactly(Verb.WATCH, Verb.WATCH);
  }

  @Test
  void wildcardsMatchEverything() {
    server.close();
    admin.close();
    start(List.of(rule("*", "*", "*")));
    try (KubernetesClient client = server.newClient(TOKEN)) {
      client.nodes().list();
      client.configMaps().inNamespace(NS).withName("a").delete();
    }
    assertThat(server.deniedRequests()).isEmpty();
  }

  @Test
  void anUnknownTokenIsUnauthorizedAndNoTokenIsAllowedEverything() throws Exception {
    try (KubernetesClient stranger = new KubernetesClientBuilder().withConfig(new ConfigBuilder(server.clientConfig())
        .withOauthToken("not-known").build()).build()) {
      assertThatThrownBy(() -> stranger.configMaps().inNamespace(NS).list())
          .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(401));
    }
    admin.nodes().list();
    admin.configMaps().inNamespace(NS).withName("b").delete();
    assertThat(server.deniedRequests()).isNotEmpty().allSatisfy(d -> {
      assertThat(d.status()).isEqualTo(401);
      assertThat(d.user()).isNull();
    });
    // paths that are not resources are open to every known user (system:discovery)
    assertThat(send("GET", "/version", TOKEN).statusCode()).isNotIn(401, 403);
    assertThat(send("GET", "/version", "not-known").statusCode()).isEqualTo(401);
  }

  @Test
  void deniedRequestsAreObservableOverHttp() throws Exception {
    assertThat(send("DELETE", "/api/v1/namespaces/test/configmaps/a", TOKEN).statusCode()).isEqualTo(403);
    HttpResponse<String> denied = send("GET", "/nodelet-testing/denied", null);
    assertThat(denied.statusCode()).isEqualTo(200);
    assertThat(denied.body()).contains("\"status\":403", "\"user\":\"" + USER + "\"", "\"verb\":\"DELETE\"");
    assertThat(send("GET", "/nodelet-testing/writes", null).body())
        .contains("\"verb\":\"DELETE\"", "\"name\":\"a\"", "\"status\":403");
  }

  @Test
  void aClusterRoleIsReadFromAManifestOfSeveralDocuments() {
    String yaml = String.join("\n",
        "apiVersion: v1",
        "kind: ServiceAccount",
        "metadata: {name: reader, namespace: test}",
        "---",
        "apiVersion: rbac.authorization.k8s.io/v1",
        "kind: ClusterRole",
        "metadata: {name: other}",
        "rules: []",
        "---",
        "apiVersion: rbac.authorization.k8s.io/v1",
        "kind: ClusterRole",
        "metadata: {name: reader}",
        "rules:",
        "- apiGroups: [\"\"]",
        "  resources: [pods]",
        "  verbs: [list, watch]",
        "");
    List<PolicyRule> rules = ClusterRoles.rules(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)),
        "reader");
    assertThat(rules).containsExactly(rule("", "pods", "list", "watch"));
    assertThatThrownBy(() -> ClusterRoles.rules(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)),
        "missing")).hasMessageContaining("no ClusterRole missing");
  }

  @Test
  void aKubeconfigCarriesTheToken(@TempDir Path dir) throws Exception {
    Path kubeconfig = server.writeKubeconfig(dir.resolve("kubeconfig"), TOKEN);
    Config config = Config.fromKubeconfig(null, Files.readString(kubeconfig), kubeconfig.toString());
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build()) {
      assertThat(client.configMaps().inNamespace(NS).list().getItems()).hasSize(2);
      assertThat(forbidden(() -> client.pods().inNamespace(NS).list()).getCode()).isEqualTo(403);
    }
  }

  private static KubernetesClientException forbidden(Runnable call) {
    try {
      call.run();
    } catch (KubernetesClientException e) {
      assertThat(e.getCode()).as(e.getMessage()).isEqualTo(403);
      return e;
    }
    throw new AssertionError("the request was allowed");
  }

  private HttpResponse<String> send(String method, String path, String token) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.url() + path))
        .header("Content-Type", "application/json")
        .method(method, method.equals("GET") ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
                + "{\"name\":\"p\",\"namespace\":\"test\"}}"));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}
