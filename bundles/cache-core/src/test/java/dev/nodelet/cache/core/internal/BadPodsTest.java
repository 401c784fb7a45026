package dev.nodelet.cache.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.RegisteredPod;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.objectcache.testing.LogCapture;
import dev.nodelet.cache.core.testing.RecordingStrategy;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Malformed pods through a manager's {@code PodListener} methods: each gets a clear error or has its invalid
 * references skipped (logged with pod and field), its valid references are registered, and what other pods
 * registered stays as it was.
 */
class BadPodsTest {

  private EmbeddedApiServer server;
  private KubernetesClient client;
  private final List<String> log = Collections.synchronizedList(new ArrayList<>());
  private SwitchableObjectManager<Secret> manager;
  private RecordingStrategy strategy;

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
    client = server.newClient();
    client.secrets().inNamespace("ns").resource(new SecretBuilder().withNewMetadata().withName("kept")
        .endMetadata().addToData("k", "dmFsdWU=").build()).create();
    manager = ObjectManagers.secrets(client).build();
    strategy = new RecordingStrategy("recording", client, log);
    manager.useStrategy("recording", strategy);
    manager.registerPod(pod("good", "u-good", "kept", "shared"));
  }

  @AfterEach
  void stop() {
    manager.close();
    client.close();
    server.close();
  }

  private static Pod pod(String name, String uid, String... secrets) {
    return new PodBuilder().withNewMetadata().withNamespace("ns").withName(name).withUid(uid).endMetadata()
        .withNewSpec().withVolumes(Arrays.stream(secrets).map(s -> new VolumeBuilder().withName("v-" + s)
            .withNewSecret().withSecretName(s).endSecret().build()).toList())
        .endSpec().build();
  }

  private Map<String, Integer> references() {
    return manager.objects().stream().collect(Collectors.toMap(CachedObject::name, CachedObject::references));
  }

  /** What the good pod registered, checked after every bad input. */
  private void goodPodIsIntact() {
    assertThat(manager.registeredPods()).contains(new RegisteredPod("ns", "good", "u-good", List.of("kept",
        "shared")));
    assertThat(manager.get("ns", "kept").getData()).containsEntry("k", "dmFsdWU=");
    assertThat(references()).containsEntry("kept", 1);
  }

  @Test
  void podsWithoutIdentityAreRefusedWithAClearErrorAndChangeNothing() {
    List<RegisteredPod> before = manager.registeredPods();
    assertThatThrownBy(() -> manager.registerPod(null)).isInstanceOf(NullPointerException.class)
        .hasMessage("pod");
    assertThatThrownBy(() -> manager.registerPod(new Pod())).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("metadata.namespace and metadata.name").hasMessageContaining("no metadata");
    Pod noNamespace = pod("p", "u", "x");
    noNamespace.getMetadata().setNamespace(null);
    assertThatThrownBy(() -> manager.registerPod(noNamespace)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("metadata.namespace");
    Pod noName = pod("p", "u", "x");
    noName.getMetadata().setName("");
    assertThatThrownBy(() -> manager.registerPod(noName)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("metadata.name");
    assertThatThrownBy(() -> manager.unregisterPod(new Pod())).isInstanceOf(IllegalArgumentException.class);

    assertThat(manager.registeredPods()).isEqualTo(before);
    assertThat(log).noneMatch(entry -> entry.contains(" x ") || entry.endsWith("/x u"));
    goodPodIsIntact();
  }

  @Test
  void aPodWithoutUidIsKeyedConsistently() {
    Pod noUid = pod("no-uid", null, "shared");
    manager.registerPod(noUid);
    assertThat(manager.registeredPods()).contains(new RegisteredPod("ns", "no-uid", "", List.of("shared")));
    assertThat(references()).containsEntry("shared", 2);
    manager.unregisterPod(noUid);
    assertThat(references()).containsEntry("shared", 1);
    goodPodIsIntact();
  }

  @Test
  void nullSpecsAndNullElementsRegisterThePodWithWhatIsValid() {
    Pod noSpec = pod("no-spec", "u1");
    noSpec.setSpec(null);
    manager.registerPod(noSpec);

    Pod nulls = pod("nulls", "u2", "shared", "own");
    nulls.getSpec().setVolumes(new ArrayList<>(nulls.getSpec().getVolumes()));
    nulls.getSpec().getVolumes().add(0, null);
    nulls.getSpec().setImagePullSecrets(Arrays.asList(null, null));
    Container container = new ContainerBuilder().withName("c").build();
    container.setEnv(Arrays.asList(null, null));
    container.setEnvFrom(Arrays.asList((EnvFromSource) null));
    nulls.getSpec().setContainers(Arrays.asList(null, container));
    try (LogCapture captured = new LogCapture()) {
      manager.registerPod(nulls);
      assertThat(captured.text()).contains("Pod ns/nulls (uid u2): 7 problem(s), the invalid references are skipped")
          .contains("spec.volumes[0] is null").contains("spec.containers[1].env[1] is null");
    }

    assertThat(manager.registeredPods()).contains(new RegisteredPod("ns", "no-spec", "u1", List.of()),
        new RegisteredPod("ns", "nulls", "u2", List.of("shared", "own")));
    assertThat(references()).containsEntry("shared", 2).containsEntry("own", 1);
    goodPodIsIntact();
  }

  @Test
  void invalidNamesAreSkippedAndLoggedWithPodAndFieldWhileValidOnesRegister() {
    Pod bad = pod("mixed", "u3", "Bad_Name", "valid-one", "x".repeat(300), "", "shared");
    try (LogCapture captured = new LogCapture()) {
      manager.registerPod(bad);
      assertThat(captured.text())
          .contains("Pod ns/mixed (uid u3): 2 problem(s), the invalid references are skipped and the valid ones used")
          .contains("spec.volumes[0].secret.secretName \"Bad_Name\" is not a valid Secret name")
          .contains("spec.volumes[2].secret.secretName \"" + "x".repeat(64) + "\"... (300 characters)")
          .doesNotContain("x".repeat(65));
    }
    assertThat(manager.registeredPods()).contains(new RegisteredPod("ns", "mixed", "u3",
        List.of("valid-one", "shared")));
    assertThat(log).noneMatch(entry -> entry.contains("Bad_Name") || entry.contains("xxxx"));
    assertThatThrownBy(() -> manager.get("ns", "Bad_Name")).isInstanceOf(NotRegisteredException.class);

    // a pod in a namespace that cannot exist keeps its registration but references nothing
    Pod badNamespace = pod("elsewhere", "u4", "shared");
    badNamespace.getMetadata().setNamespace("Bad_NS");
    manager.registerPod(badNamespace);
    assertThat(manager.registeredPods()).contains(new RegisteredPod("Bad_NS", "elsewhere", "u4", List.of()));
    assertThat(log).noneMatch(entry -> entry.contains("Bad_NS/"));

    // the pod dropping its bad references again changes only its own registration
    manager.registerPod(pod("mixed", "u3", "valid-one"));
    assertThat(references()).containsEntry("shared", 1).containsEntry("valid-one", 1);
    manager.unregisterPod(bad);
    assertThat(references()).doesNotContainKey("valid-one");
    goodPodIsIntact();
  }

  @Test
  void aPodWithThousandsOfReferencesRegistersAndUnregistersCompletely() {
    List<Volume> volumes = new ArrayList<>();
    for (int i = 0; i < 3000; i++) {
      volumes.add(new VolumeBuilder().withName("v" + i).withNewSecret().withSecretName("s-" + i).endSecret()
          .build());
    }
    List<Container> containers = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      containers.add(new ContainerBuilder().withName("c" + i).addNewEnv().withName("E").withNewValueFrom()
          .withNewSecretKeyRef().withName(i % 2 == 0 ? "shared" : "env-" + i).withKey("k").endSecretKeyRef()
          .endValueFrom().endEnv().build());
    }
    Pod big = new PodBuilder().withNewMetadata().withNamespace("ns").withName("big").withUid("u-big").endMetadata()
        .withNewSpec().withVolumes(volumes).withContainers(containers).endSpec().build();

    manager.registerPod(big);
    Map<String, Integer> references = references();
    assertThat(references).hasSize(2 + 1000 + 3000).containsEntry("shared", 2).containsEntry("s-2999", 1);
    RegisteredPod registered = manager.registeredPods().stream().filter(p -> p.name().equals("big")).findFirst()
        .orElseThrow();
    assertThat(registered.references()).hasSize(1001 + 3000);

    manager.unregisterPod(big);
    assertThat(references()).containsOnlyKeys("kept", "shared").containsEntry("shared", 1);
    Map<String, Map<String, Integer>> stored = strategy.store(0).references();
    assertThat(stored.keySet()).containsExactlyInAnyOrder("ns/kept", "ns/shared");
    goodPodIsIntact();
  }

  @Test
  void configMapManagersSkipTheSameWay() {
    try (SwitchableObjectManager<ConfigMap> configMaps =
        ObjectManagers.configMaps(client).build()) {
      Pod pod = new PodBuilder().withNewMetadata().withNamespace("ns").withName("cm-pod").withUid("u5")
          .endMetadata().withNewSpec()
          .addNewVolume().withName("a").withNewConfigMap().withName("UPPER").endConfigMap().endVolume()
          .addNewVolume().withName("b").withNewConfigMap().withName("fine").endConfigMap().endVolume()
          .endSpec().build();
      configMaps.registerPod(pod);
      assertThat(configMaps.registeredPods()).containsExactly(new RegisteredPod("ns", "cm-pod", "u5",
          List.of("fine")));
    }
  }
}
