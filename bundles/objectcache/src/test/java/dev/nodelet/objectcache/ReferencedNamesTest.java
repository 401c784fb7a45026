package dev.nodelet.objectcache;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvFromSourceBuilder;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.EphemeralContainerBuilder;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import org.junit.jupiter.api.Test;

class ReferencedNamesTest {

  private static LocalObjectReference ref(String name) {
    return new LocalObjectReference(name);
  }

  private static ContainerBuilder container(String prefix) {
    return new ContainerBuilder().withName(prefix)
        .withEnvFrom(
            new EnvFromSourceBuilder().withNewSecretRef().withName(prefix + "-envfrom-s").endSecretRef().build(),
            new EnvFromSourceBuilder().withNewConfigMapRef().withName(prefix + "-envfrom-c").endConfigMapRef().build())
        .withEnv(
            new EnvVarBuilder().withName("A").withNewValueFrom().withNewSecretKeyRef().withName(prefix + "-env-s")
                .withKey("k").endSecretKeyRef().endValueFrom().build(),
            new EnvVarBuilder().withName("B").withNewValueFrom().withNewConfigMapKeyRef().withName(prefix + "-env-c")
                .withKey("k").endConfigMapKeyRef().endValueFrom().build(),
            new EnvVarBuilder().withName("C").withValue("plain").build());
  }

  private static Pod everything() {
    return new PodBuilder().withNewMetadata().withNamespace("ns").withName("p").withUid("u").endMetadata()
        .withNewSpec()
        .withImagePullSecrets(ref("pull-1"), ref(""), ref("pull-2"))
        .withContainers(container("main").build())
        .withInitContainers(container("init").build())
        .withEphemeralContainers(new EphemeralContainerBuilder().withName("debug")
            .withEnvFrom(new EnvFromSourceBuilder().withNewSecretRef().withName("eph-envfrom-s").endSecretRef()
                .build())
            .withEnv(new EnvVarBuilder().withName("A").withNewValueFrom().withNewConfigMapKeyRef()
                .withName("eph-env-c").withKey("k").endConfigMapKeyRef().endValueFrom().build())
            .build())
        .withVolumes(
            new VolumeBuilder().withName("v1").withNewAzureFile().withSecretName("azure").withShareName("s")
                .endAzureFile().build(),
            new VolumeBuilder().withName("v1b").withNewAzureFile().withSecretName("").withShareName("s")
                .endAzureFile().build(),
            new VolumeBuilder().withName("v2").withNewCephfs().withSecretRef(ref("cephfs")).withSecretFile("file")
                .endCephfs().build(),
            new VolumeBuilder().withName("v3").withNewCinder().withSecretRef(ref("cinder")).endCinder().build(),
            new VolumeBuilder().withName("v4").withNewFlexVolume().withDriver("d").withSecretRef(ref("flex"))
                .endFlexVolume().build(),
            new VolumeBuilder().withName("v5").withNewProjected()
                .addNewSource().withNewSecret().withName("projected-s").endSecret().endSource()
                .addNewSource().withNewConfigMap().withName("projected-c").endConfigMap().endSource()
                .endProjected().build(),
            new VolumeBuilder().withName("v6").withNewRbd().withSecretRef(ref("rbd")).endRbd().build(),
            new VolumeBuilder().withName("v7").withNewSecret().withSecretName("secret-vol").endSecret().build(),
            new VolumeBuilder().withName("v8").withNewScaleIO().withSecretRef(ref("scaleio")).endScaleIO().build(),
            new VolumeBuilder().withName("v9").withNewIscsi().withSecretRef(ref("iscsi")).endIscsi().build(),
            new VolumeBuilder().withName("v10").withNewStorageos().withSecretRef(ref("storageos")).endStorageos()
                .build(),
            new VolumeBuilder().withName("v11").withNewCsi().withDriver("d").withNodePublishSecretRef(ref("csi"))
                .endCsi().build(),
            new VolumeBuilder().withName("v12").withNewConfigMap().withName("configmap-vol").endConfigMap().build(),
            new VolumeBuilder().withName("v13").withNewPersistentVolumeClaim().withClaimName("pvc")
                .endPersistentVolumeClaim().build())
        .endSpec().build();
  }

  @Test
  void secretsInTheKubeletsOrder() {
    assertThat(ReferencedNames.secrets(everything())).containsExactly(
        "pull-1", "pull-2",
        "init-envfrom-s", "init-env-s",
        "main-envfrom-s", "main-env-s",
        "eph-envfrom-s",
        "azure", "cephfs", "cinder", "flex", "projected-s", "rbd", "secret-vol", "scaleio", "iscsi", "storageos",
        "csi");
  }

  @Test
  void configMapsInTheKubeletsOrder() {
    assertThat(ReferencedNames.configMaps(everything())).containsExactly(
        "init-envfrom-c", "init-env-c",
        "main-envfrom-c", "main-env-c",
        "eph-env-c",
        "projected-c", "configmap-vol");
  }

  @Test
  void aNameReferencedTwiceCountsOnce() {
    Pod pod = new PodBuilder().withNewSpec()
        .withImagePullSecrets(ref("same"))
        .withVolumes(new VolumeBuilder().withName("v").withNewSecret().withSecretName("same").endSecret().build())
        .endSpec().build();
    assertThat(ReferencedNames.secrets(pod)).containsExactly("same");
  }

  @Test
  void aPodWithoutSpecReferencesNothing() {
    Pod pod = new PodBuilder().withNewMetadata().withName("p").endMetadata().build();
    assertThat(ReferencedNames.secrets(pod)).isEmpty();
    assertThat(ReferencedNames.configMaps(pod)).isEmpty();
  }
}
