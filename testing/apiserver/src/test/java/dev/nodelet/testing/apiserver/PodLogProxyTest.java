package dev.nodelet.testing.apiserver;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The answers of {@code pods/log} that the API server gives itself, before it goes on to a node (the way to the
 * node and back is {@code KubectlLogsTest} of the node's API): kube-apiserver's messages for a pod with no node, a
 * container to choose or not in the pod, and RBAC on {@code pods/log}.
 */
class PodLogProxyTest {

  private static final String READER = "reader-token";
  private static final String GETTER = "getter-token";

  private EmbeddedApiServer server;
  private KubernetesClient admin;

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder()
        .authorize(READER, "log-reader", List.of(new PolicyRuleBuilder().withApiGroups("")
            .withResources("pods", "pods/log").withVerbs("get").build()))
        .authorize(GETTER, "pod-getter", List.of(new PolicyRuleBuilder().withApiGroups("")
            .withResources("pods").withVerbs("get").build()))
        .build().start();
    admin = server.newClient();
    admin.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName("unscheduled")
        .endMetadata().withNewSpec().addNewContainer().withName("app").withImage("a").endContainer().endSpec()
        .build()).create();
    admin.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName("two")
        .endMetadata().withNewSpec().withNodeName("edge-1").addNewContainer().withName("app").withImage("a")
        .endContainer().addNewContainer().withName("sidecar").withImage("b").endContainer().endSpec().build())
        .create();
    admin.nodes().resource(new NodeBuilder().withNewMetadata().withName("edge-1").endMetadata().build()).create();
  }

  @AfterEach
  void stop() {
    admin.close();
    server.close();
  }

  @Test
  void answersAsKubeApiserverBeforeReachingTheNode() throws Exception {
    assertThat(log("unscheduled", "", null)).isEqualTo("400 pod unscheduled does not have a host assigned");
    assertThat(log("two", "", null))
        .isEqualTo("400 a container name must be specified for pod two, choose one of: [app, sidecar]");
    assertThat(log("two", "?container=db", null)).isEqualTo("400 container db is not valid for pod two");
    assertThat(log("absent", "", null)).isEqualTo("404 pods \"absent\" not found");
    // the Node has no address nor kubelet port in its status yet: nowhere to go
    assertThat(log("two", "?container=app&follow=true", null))
        .isEqualTo("500 node edge-1 has no InternalIP address or kubelet port in its status");
  }

  @Test
  void readingALogNeedsGetOnPodsLog() throws Exception {
    assertThat(log("unscheduled", "", GETTER)).startsWith("403 pods \"unscheduled\" is forbidden: User "
        + "\"pod-getter\" cannot get resource \"pods/log\"");
    // authorized: it gets as far as the pod, which has no node
    assertThat(log("unscheduled", "", READER)).startsWith("400 ");
  }

  /** @return the status code and the message of a GET of a pod's log */
  private String log(String pod, String query, String token) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.url() + "/api/v1/namespaces/default/pods/"
        + pod + "/log" + query));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    HttpResponse<String> response = HttpClient.newHttpClient().send(request.build(),
        HttpResponse.BodyHandlers.ofString());
    return response.statusCode() + " " + new ObjectMapper().readTree(response.body()).path("message").asText();
  }
}
