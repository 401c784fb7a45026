package dev.nodelet.node.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.testing.apiserver.ClusterRoles;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.RecordedWrite;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Node mode with a client limited to the roles of {@code docs/deploy/rbac.yaml} and {@code rbac-node.yaml}: it
 * registers (and adopts), renews and reports without a request refused, and writes only its own Node and Lease.
 */
class NodeRbacTest {

  private static final Path DEPLOY = Path.of("../../docs/deploy");
  private static final String TOKEN = "node-token";
  private static final String BASE_TOKEN = "base-token";
  private static final String USER = "system:serviceaccount:nodelet-system:nodelet";
  private static final String NODE = "node-a";
  private static final String OTHER = "node-b";

  private EmbeddedApiServer server;
  private final DrivenTime time = new DrivenTime();
  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
    server.close();
  }

  private static List<PolicyRule> nodeModeRules() throws IOException {
    List<PolicyRule> rules = new ArrayList<>(ClusterRoles.rules(DEPLOY.resolve("rbac.yaml"), "nodelet"));
    rules.addAll(ClusterRoles.rules(DEPLOY.resolve("rbac-node.yaml"), "nodelet-node"));
    try (InputStream in = Files.newInputStream(DEPLOY.resolve("rbac-node.yaml"))) {
      Role lease = ((List<?>) Serialization.unmarshal(in)).stream().filter(Role.class::isInstance)
          .map(Role.class::cast).filter(r -> r.getMetadata().getName().equals("nodelet-node-lease")).findFirst()
          .orElseThrow();
      // the embedded server matches rules cluster-wide: the Role's namespace is checked here
      assertThat(lease.getMetadata().getNamespace()).isEqualTo("kube-node-lease");
      rules.addAll(lease.getRules());
    }
    return rules;
  }

  private KubernetesClient client(String token) {
    KubernetesClient client = server.newClient(token);
    closing.add(client);
    return client;
  }

  private NodeAgent agent(KubernetesClient client) {
    NodeAgent agent = NodeAgent.builder(client, new NodeObjects.Identity(NODE, NODE), NodeSettings.defaults(),
        () -> Facts.of(4)).clock(time).timer(time.timer()).build();
    closing.add(0, agent);
    agent.start();
    return agent;
  }

  @Test
  void nodeModeNeedsNoMoreThanItsRolesAndWritesOnlyItsOwnNodeAndLease() throws IOException {
    server = EmbeddedApiServer.builder().authorize(TOKEN, USER, nodeModeRules()).build().start();
    KubernetesClient admin = server.newClient();
    closing.add(admin);
    admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(OTHER).endMetadata().build()).create();
    admin.leases().inNamespace("kube-node-lease").resource(new LeaseBuilder().withNewMetadata().withName(OTHER)
        .endMetadata().withNewSpec().withHolderIdentity(OTHER).endSpec().build()).create();
    server.clearWrites();

    NodeAgent agent = agent(client(TOKEN));
    time.runDue();
    time.advance(Duration.ofSeconds(30)); // Lease renewals and status computations
    assertThat(agent.registered()).isTrue();
    assertThat(agent.problem()).isEmpty();

    // a second start adopts the Node it finds, with the same rights
    admin.nodes().withName(NODE).edit(n -> new NodeBuilder(n).editMetadata().removeFromLabels("kubernetes.io/arch")
        .endMetadata().build());
    agent.close();
    agent(client(TOKEN));
    time.advance(Duration.ofSeconds(20));

    assertThat(server.deniedRequests()).isEmpty();
    assertThat(admin.nodes().withName(NODE).get().getMetadata().getLabels()).containsKey("kubernetes.io/arch");
    List<RecordedWrite> writes = server.writes();
    assertThat(writes).isNotEmpty().allSatisfy(w -> {
      assertThat(w.name()).isEqualTo(NODE);
      if (w.resource().equals("leases")) {
        assertThat(w.namespace()).isEqualTo("kube-node-lease");
      } else {
        assertThat(w.resource()).isEqualTo("nodes");
      }
    });
    assertThat(writes).extracting(w -> w.resource() + " " + w.verb()).contains("nodes CREATE", "nodes PATCH",
        "leases CREATE", "leases UPDATE");
  }

  @Test
  void theBaseRoleAloneDoesNotLetANodeRegister() {
    server = EmbeddedApiServer.builder().authorize(BASE_TOKEN, USER,
        ClusterRoles.rules(DEPLOY.resolve("rbac.yaml"), "nodelet")).build().start();
    NodeAgent agent = agent(client(BASE_TOKEN));
    time.runDue();
    assertThat(agent.registered()).isFalse();
    assertThat(server.deniedRequests()).extracting(d -> d.verb() + " " + d.resource()).containsExactly(
        "CREATE nodes");
  }
}
