package dev.nodelet.kube.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.kube.internal.watch.Engine;
import dev.nodelet.kube.internal.watch.EngineSettings;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class NodeIdentityReflectorTest {

  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines

  private EmbeddedApiServer server;
  private KubernetesClient admin;
  private KubernetesClient nodeletClient;
  private Engine reflectors;

  @BeforeEach
  void startServer() {
    server = EmbeddedApiServer.builder().build().start();
    admin = server.newClient();
    nodeletClient = new KubeClientFactory().create(
        KubeSettings.builder().masterUrl(server.url()).nodeName("node-a").build());
    reflectors = new Engine(nodeletClient, EngineSettings.builder()
        .backoff(java.time.Duration.ofMillis(50), java.time.Duration.ofMillis(500)).build());
  }

  @AfterEach
  void stopServer() {
    reflectors.close();
    nodeletClient.close();
    admin.close();
    server.close();
  }

  private Node createNode(String name) {
    return admin.nodes().resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
  }

  @Test
  void followsTheUidOfItsOwnNodeOnly() {
    createNode("node-b");
    try (NodeIdentityReflector identity = new NodeIdentityReflector(reflectors, "node-a")) {
      identity.start();
      await().atMost(WAIT).until(() -> server.openWatches("nodes", "metadata.name=node-a") == 1);
      assertThat(identity.nodeName()).isEqualTo("node-a");
      assertThat(identity.nodeUid()).isEmpty();

      String firstUid = createNode("node-a").getMetadata().getUid();
      await().atMost(WAIT).until(() -> identity.nodeUid().isPresent());
      assertThat(identity.nodeUid()).contains(firstUid);

      admin.nodes().withName("node-a").delete();
      await().atMost(WAIT).until(() -> identity.nodeUid().isEmpty());

      String secondUid = createNode("node-a").getMetadata().getUid();
      assertThat(secondUid).isNotEqualTo(firstUid);
      await().atMost(WAIT).until(() -> identity.nodeUid().isPresent());
      assertThat(identity.nodeUid()).contains(secondUid);
    }
  }

  @Test
  void followsTheAnnotationsOfItsNode() {
    createNode("node-a");
    try (NodeIdentityReflector identity = new NodeIdentityReflector(reflectors, "node-a")) {
      identity.start();
      await().atMost(WAIT).until(() -> identity.nodeUid().isPresent());
      assertThat(identity.nodeAnnotation("node.alpha.kubernetes.io/ttl")).isEmpty();

      admin.nodes().withName("node-a").edit(n -> new NodeBuilder(n).editMetadata()
          .addToAnnotations("node.alpha.kubernetes.io/ttl", "30").endMetadata().build());
      await().atMost(WAIT).until(() -> identity.nodeAnnotation("node.alpha.kubernetes.io/ttl").isPresent());
      assertThat(identity.nodeAnnotation("node.alpha.kubernetes.io/ttl")).contains("30");
      assertThat(identity.nodeAnnotation("other")).isEmpty();

      admin.nodes().withName("node-a").delete();
      await().atMost(WAIT).until(() -> identity.nodeAnnotation("node.alpha.kubernetes.io/ttl").isEmpty());
    }
  }

  @Test
  void startDoesNotWaitForTheServerAndRetriesUntilItIsBack() {
    String uid = createNode("node-a").getMetadata().getUid();
    server.stop();
    try (NodeIdentityReflector identity = new NodeIdentityReflector(reflectors, "node-a")) {
      identity.start();
      assertThat(identity.nodeUid()).isEmpty();

      server.start();
      await().atMost(Duration.ofSeconds(30)).until(() -> identity.nodeUid().isPresent());
      assertThat(identity.nodeUid()).contains(uid);
    }
  }

  @Test
  void closingTheClientRightAfterTheReflectorStillEndsTheWatch() {
    createNode("node-a");
    NodeIdentityReflector identity = new NodeIdentityReflector(reflectors, "node-a");
    identity.start();
    // the UID arrives with the initial events, while the watch is open
    await().atMost(WAIT).until(() -> identity.nodeUid().isPresent());

    // what deactivation does
    identity.close();
    reflectors.close();
    nodeletClient.close();

    await().atMost(WAIT).until(() -> server.openWatches("nodes") == 0);
  }

  @Test
  void closeEndsTheWatch() {
    NodeIdentityReflector identity = new NodeIdentityReflector(reflectors, "node-a");
    identity.start();
    await().atMost(WAIT).until(() -> server.openWatches("nodes") == 1);

    identity.close();

    await().atMost(WAIT).until(() -> server.openWatches("nodes") == 0);
  }
}
