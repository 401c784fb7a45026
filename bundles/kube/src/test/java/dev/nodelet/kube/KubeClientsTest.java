package dev.nodelet.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The plain-Java client: the same client the OSGi service builds, against the embedded API server. */
class KubeClientsTest {

  @Test
  void aClientBuiltInPlainJavaTalksToTheApiServer() {
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient client = KubeClients.builder().masterUrl(server.clientConfig().getMasterUrl())
            .requestTimeout(Duration.ofSeconds(5)).build()) {
      client.configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName("a")
          .endMetadata().addToData("k", "1").build()).create();
      assertThat(client.configMaps().inNamespace("ns").withName("a").get().getData()).containsEntry("k", "1");
    }
  }

  @Test
  void anUnusableOptionIsNamed() {
    assertThatThrownBy(() -> KubeClients.builder().masterUrl("ftp://user:secret@host").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("master.url: must be an absolute http or https URL with a host and without user information");
  }
}
