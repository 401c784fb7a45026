package dev.nodelet.testing.apiserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A patch whose metadata.uid names another object is refused with 409, as the kube-apiserver's preconditions. */
class UidPreconditionTest {

  private final EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
  private final KubernetesClient client = server.newClient();

  @AfterEach
  void close() {
    client.close();
    server.close();
  }

  @Test
  void aStatusPatchCarryingAnotherUidIsRefusedAndTheRightOneApplies() {
    Pod pod = client.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName("p")
        .endMetadata().withNewSpec().addNewContainer().withName("c").withImage("i").endContainer().endSpec()
        .build()).create();
    String uid = pod.getMetadata().getUid();

    assertThatThrownBy(() -> client.pods().inNamespace("default").withName("p").subresource("status")
        .patch(PatchContext.of(PatchType.JSON_MERGE),
            "{\"metadata\":{\"uid\":\"other\"},\"status\":{\"phase\":\"Running\"}}"))
        .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
          assertThat(e.getCode()).isEqualTo(409);
          assertThat(e.getMessage()).contains("Precondition failed: UID in precondition: other");
        });
    Pod stored = client.pods().inNamespace("default").withName("p").get();
    assertThat(stored.getMetadata().getUid()).isEqualTo(uid);
    assertThat(stored.getStatus() == null ? null : stored.getStatus().getPhase()).isNotEqualTo("Running");

    client.pods().inNamespace("default").withName("p").subresource("status").patch(
        PatchContext.of(PatchType.JSON_MERGE),
        "{\"metadata\":{\"uid\":\"" + uid + "\"},\"status\":{\"phase\":\"Running\"}}");
    assertThat(client.pods().inNamespace("default").withName("p").get().getStatus().getPhase())
        .isEqualTo("Running");
  }
}
