package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The kubelet's admission: pods capacity and NoExecute taints, with the API's toleration rules. */
class AdmissionTest {

  private static final Taint BUNDLES = new Taint("NoExecute", "nodelet.dev/untrusted", null, "true");

  private static Pod pod(Toleration... tolerations) {
    return new PodBuilder().withNewMetadata().withName("p").endMetadata().withNewSpec()
        .withTolerations(tolerations).endSpec().build();
  }

  @Test
  void podsBeyondCapacityAreOutOfpods() {
    assertThat(Admission.admit(pod(), 1, 2, List.of())).isEmpty();
    var rejection = Admission.admit(pod(), 2, 2, List.of()).orElseThrow();
    assertThat(rejection.reason()).isEqualTo("OutOfpods");
    assertThat(rejection.message()).isEqualTo("Node didn't have enough resource: pods, requested: 1, used: 2, "
        + "capacity: 2");
  }

  @Test
  void aNoExecuteTaintMustBeTolerated() {
    assertThat(Admission.admit(pod(), 0, 10, List.of(BUNDLES)).orElseThrow().reason()).isEqualTo("Taint");
    assertThat(Admission.admit(pod(new Toleration("NoExecute", "nodelet.dev/untrusted", "Equal", null, "true")),
        0, 10, List.of(BUNDLES))).isEmpty();
    assertThat(Admission.admit(pod(new Toleration(null, "nodelet.dev/untrusted", "Exists", null, null)),
        0, 10, List.of(BUNDLES))).isEmpty();
    assertThat(Admission.admit(pod(new Toleration(null, null, "Exists", null, null)), 0, 10, List.of(BUNDLES)))
        .isEmpty();
    assertThat(Admission.admit(pod(new Toleration("NoSchedule", "nodelet.dev/untrusted", "Exists", null, null)),
        0, 10, List.of(BUNDLES))).isPresent();
    assertThat(Admission.admit(pod(new Toleration(null, "nodelet.dev/untrusted", "Equal", null, "false")),
        0, 10, List.of(BUNDLES))).isPresent();
  }

  @Test
  void noScheduleTaintsAreTheSchedulersNotTheNodes() {
    assertThat(Admission.admit(pod(), 0, 10, List.of(new Taint("NoSchedule", "nodelet.dev/bundles", null,
        "true")))).isEmpty();
  }
}
