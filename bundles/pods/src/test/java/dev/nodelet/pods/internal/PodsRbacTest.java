package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.testing.apiserver.ClusterRoles;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The pods' writes and reads with a client limited to the roles of {@code docs/deploy/rbac.yaml} and
 * {@code rbac-node.yaml}: none is refused.
 */
class PodsRbacTest {

  private static final Path DEPLOY = Path.of("../../docs/deploy");
  private static final String TOKEN = "node-token";

  @Test
  void thePodsStatusDeleteAndNodeNeedNoMoreThanTheDeployedRoles() throws Exception {
    List<PolicyRule> rules = new ArrayList<>(ClusterRoles.rules(DEPLOY.resolve("rbac.yaml"), "nodelet"));
    rules.addAll(ClusterRoles.rules(DEPLOY.resolve("rbac-node.yaml"), "nodelet-node"));
    try (EmbeddedApiServer server = EmbeddedApiServer.builder()
        .authorize(TOKEN, "system:serviceaccount:nodelet-system:nodelet", rules).build().start();
        KubernetesClient admin = server.newClient();
        KubernetesClient limited = server.newClient(TOKEN)) {
      admin.nodes().resource(new NodeBuilder().withNewMetadata().withName("node-1").endMetadata().build()).create();
      Pod pod = admin.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName("p")
          .endMetadata().withNewSpec().addNewContainer().withName("c").withImage("mvn:g/a/1").endContainer()
          .withNodeName("node-1").endSpec().build()).create();
      KubePodApi api = new KubePodApi(limited);
      try {
        assertThat(api.node("node-1")).isNotNull();
        assertThat(api.writeStatus(pod, new PodStatusBuilder().withPhase("Running").build()))
            .isEqualTo(PodApi.Outcome.DONE);
        assertThat(api.delete(pod)).isEqualTo(PodApi.Outcome.DONE);
      } finally {
        api.close();
      }
      assertThat(server.deniedRequests()).isEmpty();
      assertThat(admin.pods().inNamespace("default").withName("p").get()).isNull();
    }
  }
}
