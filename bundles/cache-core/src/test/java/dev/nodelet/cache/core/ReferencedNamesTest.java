package dev.nodelet.cache.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvFromSourceBuilder;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.fabric8.kubernetes.api.model.EphemeralContainer;
import io.fabric8.kubernetes.api.model.EphemeralContainerBuilder;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeProjectionBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
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

  // ------------------------------------------------------------------ bad input

  private static PodBuilder named(String namespace) {
    return new PodBuilder().withNewMetadata().withNamespace(namespace).withName("p").withUid("u").endMetadata();
  }

  @Test
  void nullListElementsAreSkippedAndNamedByTheirField() {
    // the builders drop null elements; a pod read from JSON such as "volumes": [null] keeps them
    Container container = new ContainerBuilder().withName("c").build();
    container.setEnvFrom(Arrays.asList(null, new EnvFromSourceBuilder().withNewSecretRef().withName("envfrom")
        .endSecretRef().build()));
    container.setEnv(Arrays.asList(null, new EnvVarBuilder().withName("A").withNewValueFrom()
        .withNewConfigMapKeyRef().withName("env-c").withKey("k").endConfigMapKeyRef().endValueFrom().build()));
    Volume projected = new VolumeBuilder().withName("proj").withNewProjected().endProjected().build();
    projected.getProjected().setSources(Arrays.asList(null, new VolumeProjectionBuilder().withNewSecret()
        .withName("projected-s").endSecret().build()));
    Pod pod = named("ns").withNewSpec().endSpec().build();
    pod.getSpec().setImagePullSecrets(Arrays.asList(null, ref("pull")));
    pod.getSpec().setContainers(Arrays.asList(null, container));
    pod.getSpec().setInitContainers(Arrays.asList((Container) null));
    pod.getSpec().setEphemeralContainers(Arrays.asList((EphemeralContainer) null));
    pod.getSpec().setVolumes(Arrays.asList(null, projected,
        new VolumeBuilder().withName("no-sources").withNewProjected().endProjected().build(),
        new VolumeBuilder().withName("no-ref").withNewCephfs().withMonitors("m").endCephfs().build()));

    List<String> secretProblems = new ArrayList<>();
    assertThat(ReferencedNames.secrets(pod, secretProblems::add)).containsExactly("pull", "envfrom", "projected-s");
    assertThat(secretProblems).containsExactly(
        "spec.imagePullSecrets[0] is null",
        "spec.initContainers[0] is null",
        "spec.containers[0] is null",
        "spec.containers[1].envFrom[0] is null",
        "spec.containers[1].env[0] is null",
        "spec.ephemeralContainers[0] is null",
        "spec.volumes[0] is null",
        "spec.volumes[1].projected.sources[0] is null");

    List<String> configMapProblems = new ArrayList<>();
    assertThat(ReferencedNames.configMaps(pod, configMapProblems::add)).containsExactly("env-c");
    assertThat(configMapProblems).contains("spec.containers[0] is null", "spec.volumes[0] is null",
        "spec.volumes[1].projected.sources[0] is null");
  }

  @Test
  void nullAndEmptyNamesReferenceNothingAsInTheKubelet() {
    Pod pod = named("ns").withNewSpec()
        .withImagePullSecrets(ref(null), ref(""))
        .addNewContainer().withName("c")
        .addNewEnvFrom().withNewSecretRef().endSecretRef().endEnvFrom()
        .addNewEnvFrom().withNewConfigMapRef().endConfigMapRef().endEnvFrom()
        .addNewEnv().withName("A").withNewValueFrom().withNewSecretKeyRef().withKey("k").endSecretKeyRef()
        .endValueFrom().endEnv()
        .endContainer()
        .addNewVolume().withName("s").withNewSecret().endSecret().endVolume()
        .addNewVolume().withName("c").withNewConfigMap().endConfigMap().endVolume()
        .addNewVolume().withName("r").withNewRbd().withSecretRef(ref(null)).endRbd().endVolume()
        .endSpec().build();
    List<String> problems = new ArrayList<>();
    assertThat(ReferencedNames.secrets(pod, problems::add)).isEmpty();
    assertThat(ReferencedNames.configMaps(pod, problems::add)).isEmpty();
    assertThat(problems).isEmpty();
  }

  @Test
  void invalidNamesAreSkippedWhileTheValidOnesOfThePodStay() {
    String tooLong = "a".repeat(254);
    Pod pod = named("ns").withNewSpec()
        .withImagePullSecrets(ref("Bad_Name"), ref("good-pull"))
        .addNewContainer().withName("c")
        .addNewEnvFrom().withNewConfigMapRef().withName("UPPER").endConfigMapRef().endEnvFrom()
        .addNewEnv().withName("A").withNewValueFrom().withNewSecretKeyRef().withName("-dash").withKey("k")
        .endSecretKeyRef().endValueFrom().endEnv()
        .endContainer()
        .addNewVolume().withName("v0").withNewSecret().withSecretName(tooLong).endSecret().endVolume()
        .addNewVolume().withName("v1").withNewSecret().withSecretName("good.secret-1").endSecret().endVolume()
        .addNewVolume().withName("v2").withNewConfigMap().withName("has space").endConfigMap().endVolume()
        .addNewVolume().withName("v3").withNewConfigMap().withName("good-config").endConfigMap().endVolume()
        .addNewVolume().withName("v4").withNewCsi().withDriver("d").withNodePublishSecretRef(ref("a/b")).endCsi()
        .endVolume()
        .endSpec().build();

    List<String> problems = new ArrayList<>();
    assertThat(ReferencedNames.secrets(pod, problems::add)).containsExactly("good-pull", "good.secret-1");
    assertThat(problems).containsExactly(
        "spec.imagePullSecrets[0].name \"Bad_Name\" is not a valid Secret name (a lower case RFC 1123 subdomain of "
            + "at most 253 characters)",
        "spec.containers[0].env[0].valueFrom.secretKeyRef.name \"-dash\" is not a valid Secret name (a lower case "
            + "RFC 1123 subdomain of at most 253 characters)",
        "spec.volumes[0].secret.secretName \"" + "a".repeat(64) + "\"... (254 characters) is not a valid Secret name "
            + "(a lower case RFC 1123 subdomain of at most 253 characters)",
        "spec.volumes[4].csi.nodePublishSecretRef.name \"a/b\" is not a valid Secret name (a lower case RFC 1123 "
            + "subdomain of at most 253 characters)");

    problems.clear();
    assertThat(ReferencedNames.configMaps(pod, problems::add)).containsExactly("good-config");
    assertThat(problems).hasSize(2);
    assertThat(problems.get(0)).startsWith("spec.containers[0].envFrom[0].configMapRef.name \"UPPER\" is not a valid "
        + "ConfigMap name");
    assertThat(problems.get(1)).startsWith("spec.volumes[2].configMap.name \"has space\" is not a valid ConfigMap");
  }

  @Test
  void aNameOf253CharactersIsValid() {
    String longest = "a".repeat(63) + "." + "b".repeat(63) + "." + "c".repeat(63) + "." + "d".repeat(61);
    assertThat(longest).hasSize(253);
    Pod pod = named("ns").withNewSpec().withImagePullSecrets(ref(longest)).endSpec().build();
    assertThat(ReferencedNames.secrets(pod, p -> {
      throw new AssertionError(p);
    })).containsExactly(longest);
  }

  @Test
  void aPodInAnInvalidNamespaceReferencesNothing() {
    Pod pod = named("Bad_NS").withNewSpec().withImagePullSecrets(ref("pull")).addNewVolume().withName("v")
        .withNewConfigMap().withName("cm").endConfigMap().endVolume().endSpec().build();
    List<String> problems = new ArrayList<>();
    assertThat(ReferencedNames.secrets(pod, problems::add)).isEmpty();
    assertThat(ReferencedNames.configMaps(pod, problems::add)).isEmpty();
    assertThat(problems).containsExactly(
        "metadata.namespace \"Bad_NS\" is not a valid namespace name (a lower case RFC 1123 label of at most 63 "
            + "characters); every reference of the pod is skipped",
        "metadata.namespace \"Bad_NS\" is not a valid namespace name (a lower case RFC 1123 label of at most 63 "
            + "characters); every reference of the pod is skipped");
  }

  @Test
  void aPodWithThousandsOfReferencesIsVisitedCompletelyInOrder() {
    List<Volume> volumes = new ArrayList<>();
    for (int i = 0; i < 3000; i++) {
      volumes.add(new VolumeBuilder().withName("v" + i).withNewSecret().withSecretName("s-" + i).endSecret()
          .build());
    }
    List<Container> containers = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      containers.add(new ContainerBuilder().withName("c" + i)
          .addNewEnv().withName("E").withNewValueFrom().withNewConfigMapKeyRef().withName("c-" + (i % 500))
          .withKey("k").endConfigMapKeyRef().endValueFrom().endEnv().build());
    }
    Pod pod = named("ns").withNewSpec().withVolumes(volumes).withContainers(containers).endSpec().build();

    Set<String> secrets = ReferencedNames.secrets(pod);
    Set<String> configMaps = ReferencedNames.configMaps(pod);
    assertThat(secrets).hasSize(3000).startsWith("s-0", "s-1").endsWith("s-2999");
    // each name once, in the order of its first reference
    assertThat(configMaps).hasSize(500).startsWith("c-0", "c-1").endsWith("c-499");
  }

  @Test
  void describeNamesAPodWhateverItLacks() {
    assertThat(ReferencedNames.describe(new Pod())).isEqualTo("(no metadata)");
    assertThat(ReferencedNames.describe(new PodBuilder().withNewMetadata().withName("p").endMetadata().build()))
        .isEqualTo("<none>/p");
    assertThat(ReferencedNames.describe(named("ns").build())).isEqualTo("ns/p (uid u)");
  }

  /** The hand-written name checks accept exactly what the kubelet's regular expressions accept. */
  @Test
  void nameChecksMatchTheKubeletsExpressions() {
    Pattern subdomain =
        Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    Pattern label = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    char[] alphabet = {'a', 'z', '0', '9', '-', '.', 'A', '_'};
    List<String> names = new ArrayList<>(List.of(""));
    int accepted = 0;
    for (int length = 1; length <= 5; length++) {
      List<String> longer = new ArrayList<>();
      for (String prefix : names) {
        if (prefix.length() == length - 1) {
          for (char c : alphabet) {
            longer.add(prefix + c);
          }
        }
      }
      names.addAll(longer);
    }
    for (String name : names) {
      boolean subdomainOk = ReferencedNames.isDns1123Subdomain(name);
      assertThat(subdomainOk).as("subdomain %s", name).isEqualTo(subdomain.matcher(name).matches());
      assertThat(ReferencedNames.isDns1123Label(name, 0, name.length())).as("label %s", name)
          .isEqualTo(label.matcher(name).matches());
      accepted += subdomainOk ? 1 : 0;
    }
    assertThat(names).hasSize(1 + 8 + 64 + 512 + 4096 + 32768);
    assertThat(accepted).isPositive();
  }
}
