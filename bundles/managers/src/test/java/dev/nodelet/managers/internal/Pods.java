package dev.nodelet.managers.internal;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;

/** The pods the manager tests register. */
final class Pods {

  private Pods() {
  }

  /** @return pod {@code name} in namespace {@code ns} with a volume per ConfigMap, each named after it */
  static Pod mounting(String name, String uid, String... configMaps) {
    PodBuilder pod = new PodBuilder().withNewMetadata().withNamespace("ns").withName(name).withUid(uid)
        .endMetadata().withNewSpec().endSpec();
    for (String configMap : configMaps) {
      pod.editSpec().addNewVolume().withName(configMap).withNewConfigMap().withName(configMap).endConfigMap()
          .endVolume().endSpec();
    }
    return pod.build();
  }
}
