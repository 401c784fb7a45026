package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Status writes through pods/status and deletes, with the UID precondition, and the Node from a watch, against the
 * embedded API server.
 */
class KubePodApiTest {

  private final EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
  private final KubernetesClient client = server.newClient();
  private final KubePodApi api = new KubePodApi(client);

  @AfterEach
  void close() {
    api.close();
    client.close();
    server.close();
  }

  private Pod create(String name) {
    return client.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName(name)
        .endMetadata().withNewSpec().addNewContainer().withName("c").withImage("mvn:g/a/1").endContainer()
        .withNodeName("node-1").endSpec().build()).create();
  }

  @Test
  void writesTheStatusThroughTheSubresourceAndClearsItsReason() {
    Pod pod = create("p");
    assertThat(api.writeStatus(pod, new PodStatusBuilder().withPhase("Failed").withReason("Taint")
        .withMessage("m").build())).isEqualTo(PodApi.Outcome.DONE);
    Pod written = client.pods().inNamespace("default").withName("p").get();
    assertThat(written.getStatus().getPhase()).isEqualTo("Failed");
    assertThat(written.getStatus().getReason()).isEqualTo("Taint");

    assertThat(api.writeStatus(pod, new PodStatusBuilder().withPhase("Running").build()))
        .isEqualTo(PodApi.Outcome.DONE);
    written = client.pods().inNamespace("default").withName("p").get();
    assertThat(written.getStatus().getPhase()).isEqualTo("Running");
    assertThat(written.getStatus().getReason()).isNull();
  }

  @Test
  void aPodReplacedUnderItsNameIsAnotherPod() {
    Pod old = create("p");
    client.pods().inNamespace("default").withName("p").withGracePeriod(0).delete(); // as a forced delete
    client.pods().inNamespace("default").withName("p").waitUntilCondition(p -> p == null,
        10, java.util.concurrent.TimeUnit.SECONDS);
    Pod replaced = create("p");
    assertThat(replaced.getMetadata().getUid()).isNotEqualTo(old.getMetadata().getUid());

    assertThat(api.writeStatus(old, new PodStatusBuilder().withPhase("Running").build()))
        .isEqualTo(PodApi.Outcome.GONE);
    assertThat(client.pods().inNamespace("default").withName("p").get().getStatus().getPhase())
        .isNotEqualTo("Running");
    assertThat(api.delete(old)).isEqualTo(PodApi.Outcome.GONE);
    assertThat(client.pods().inNamespace("default").withName("p").get()).isNotNull();

    assertThat(api.delete(replaced)).isEqualTo(PodApi.Outcome.DONE);
    assertThat(client.pods().inNamespace("default").withName("p").get()).isNull();
    assertThat(api.delete(replaced)).isEqualTo(PodApi.Outcome.GONE);
  }

  @Test
  void readsTheNodeFromItsWatchNotWithAGetEachTime() {
    assertThat(api.node("node-1")).as("no Node yet").isNull();
    client.nodes().resource(new io.fabric8.kubernetes.api.model.NodeBuilder().withNewMetadata().withName("node-1")
        .addToLabels("zone", "a").endMetadata().build()).create();
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> {
      long before = server.requestCount(dev.nodelet.testing.apiserver.Verb.GET, "nodes");
      return api.node("node-1") != null
          && server.requestCount(dev.nodelet.testing.apiserver.Verb.GET, "nodes") == before;
    });
    long gets = server.requestCount(dev.nodelet.testing.apiserver.Verb.GET, "nodes");
    for (int i = 0; i < 10; i++) {
      assertThat(api.node("node-1").getMetadata().getLabels()).containsEntry("zone", "a");
    }
    assertThat(server.requestCount(dev.nodelet.testing.apiserver.Verb.GET, "nodes")).isEqualTo(gets);
    client.nodes().withName("node-1").edit(n -> { // a get and an update of the test's own
      n.getMetadata().getLabels().put("zone", "b");
      return n;
    });
    gets = server.requestCount(dev.nodelet.testing.apiserver.Verb.GET, "nodes");
    org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
        .until(() -> "b".equals(api.node("node-1").getMetadata().getLabels().get("zone")));
    assertThat(server.requestCount(dev.nodelet.testing.apiserver.Verb.GET, "nodes")).as("no get once watched")
        .isEqualTo(gets);
  }
}
