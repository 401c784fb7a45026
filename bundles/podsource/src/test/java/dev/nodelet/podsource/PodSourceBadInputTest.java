package dev.nodelet.podsource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.objectcache.PodListener;
import dev.nodelet.objectcache.RegisteredPod;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Malformed pods created on the API server reach the real managers through the pod source: the invalid references
 * are skipped, the valid ones of the same pod registered, other pods untouched, and nothing a listener throws stops
 * the delivery of later events.
 */
class PodSourceBadInputTest {

  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines
  private static final String NODE = "node-a";

  // stores the badly named pods a real API server would refuse, as a misbehaving writer could have left them
  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension(EmbeddedApiServer.Builder::acceptInvalidNames);
  private ReflectorEngine reflectors;
  private PodSource source;
  private SwitchableObjectManager<Secret> secrets;
  private SwitchableObjectManager<ConfigMap> configMaps;

  @BeforeEach
  void start() {
    reflectors = ReflectorEngine.builder(api.client()).build();
    secrets = ObjectManagers.secrets(api.client()).build();
    configMaps = ObjectManagers.configMaps(api.client()).build();
  }

  @AfterEach
  void stop() {
    if (source != null) {
      source.close();
    }
    secrets.close();
    configMaps.close();
    reflectors.close();
  }

  private static PodBuilder pod(String name) {
    return new PodBuilder().withNewMetadata().withNamespace("ns").withName(name).endMetadata();
  }

  private static Volume secretVolume(String volume, String secret) {
    return new VolumeBuilder().withName(volume).withNewSecret().withSecretName(secret).endSecret().build();
  }

  private void create(Pod pod) {
    pod.getSpec().setNodeName(NODE);
    api.client().pods().inNamespace("ns").resource(pod).create();
  }

  private static Map<String, List<String>> byName(SwitchableObjectManager<?> manager) {
    return manager.registeredPods().stream().collect(Collectors.toMap(RegisteredPod::name, RegisteredPod::references,
        (a, b) -> a));
  }

  @Test
  void malformedPodsRegisterWhatIsValidAndLeaveOtherPodsAlone() {
    create(pod("good").withNewSpec().addNewContainer().withName("c").withImage("i").addNewEnvFrom()
        .withNewConfigMapRef().withName("c-good").endConfigMapRef().endEnvFrom().endContainer()
        .withVolumes(secretVolume("v", "s-good")).endSpec().build());
    source = PodSource.builder(reflectors, NODE).listenerThreads(2).build();
    source.addListener(secrets);
    source.addListener(configMaps);
    source.start();
    await().atMost(WAIT).until(() -> byName(secrets).containsKey("good") && byName(configMaps).containsKey("good"));

    // invalid names next to valid ones, null list elements (as a JSON "volumes": [null, ...] gives them)
    Pod mixed = pod("mixed").withNewSpec().addNewContainer().withName("c").withImage("i").endContainer()
        .withVolumes(secretVolume("a", "Bad_Name"), secretVolume("b", "s-ok"), secretVolume("c", "x".repeat(300)),
            new VolumeBuilder().withName("d").withNewConfigMap().withName("").endConfigMap().build(),
            new VolumeBuilder().withName("e").withNewConfigMap().withName("c-ok").endConfigMap().build())
        .endSpec().build();
    mixed.getSpec().setVolumes(new ArrayList<>(mixed.getSpec().getVolumes()));
    mixed.getSpec().getVolumes().add(null);
    Container nulls = new ContainerBuilder().withName("n").withImage("i").build();
    nulls.setEnv(Arrays.asList(null, null));
    mixed.getSpec().getContainers().add(nulls);
    create(mixed);
    // names a real API server would refuse, which a pod source must still survive
    create(pod("Bad_Pod_Name").withNewSpec().withVolumes(secretVolume("v", "s-good")).endSpec().build());
    create(pod("p".repeat(300)).withNewSpec().withVolumes(secretVolume("v", "s-long")).endSpec().build());
    create(pod("no-volumes").withNewSpec().addNewContainer().withName("c").withImage("i").endContainer()
        .endSpec().build());
    // thousands of volumes and containers
    List<Volume> volumes = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      volumes.add(secretVolume("v" + i, "big-" + i));
    }
    List<Container> containers = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      containers.add(new ContainerBuilder().withName("c" + i).withImage("i").addNewEnv().withName("E")
          .withNewValueFrom().withNewConfigMapKeyRef().withName("big-c-" + i).withKey("k").endConfigMapKeyRef()
          .endValueFrom().endEnv().build());
    }
    create(pod("big").withNewSpec().withVolumes(volumes).withContainers(containers).endSpec().build());

    await().atMost(WAIT).until(() -> byName(secrets).size() == 6 && byName(configMaps).size() == 6);
    Map<String, List<String>> secretPods = byName(secrets);
    assertThat(secretPods).containsEntry("good", List.of("s-good"))
        .containsEntry("mixed", List.of("s-ok"))
        .containsEntry("Bad_Pod_Name", List.of("s-good"))
        .containsEntry("p".repeat(300), List.of("s-long"))
        .containsEntry("no-volumes", List.of());
    assertThat(secretPods.get("big")).hasSize(2000);
    Map<String, List<String>> configMapPods = byName(configMaps);
    assertThat(configMapPods).containsEntry("good", List.of("c-good")).containsEntry("mixed", List.of("c-ok"));
    assertThat(configMapPods.get("big")).hasSize(1000);
    assertThat(secrets.objects()).filteredOn(o -> o.name().equals("s-good")).singleElement()
        .satisfies(o -> assertThat(o.references()).isEqualTo(2));

    // deleting the malformed pods takes exactly their references away
    for (String name : List.of("mixed", "Bad_Pod_Name", "p".repeat(300), "big")) {
      api.client().pods().inNamespace("ns").withName(name).withGracePeriod(0).delete(); // gone, as its node releases it
    }
    await().atMost(WAIT).until(() -> byName(secrets).keySet().equals(java.util.Set.of("good", "no-volumes")));
    await().atMost(WAIT).until(() -> byName(configMaps).size() == 2);
    assertThat(secrets.objects()).extracting(o -> o.name() + "=" + o.references()).containsExactly("s-good=1");
    assertThat(configMaps.objects()).extracting(o -> o.name() + "=" + o.references()).containsExactly("c-good=1");
  }

  @Test
  void whatAListenerThrowsNeverStopsTheDeliveryOfLaterEvents() throws Exception {
    source = PodSource.builder(reflectors, NODE).listenerThreads(2).build();
    Throwing throwing = new Throwing();
    Throwing observer = new Throwing();
    observer.release.countDown();
    source.addListener(throwing);
    source.addListener(observer);
    source.start();
    create(pod("first").withNewSpec().endSpec().build());
    assertThat(throwing.entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    for (String name : List.of("runtime", "linkage", "overflow", "last")) {
      create(pod(name).withNewSpec().endSpec().build());
    }
    // the source offers each event to every queue at once: once the observer has the last one, the blocked
    // listener has all four queued behind its first call, to be delivered as one batch
    await().atMost(WAIT).until(() -> observer.calls().contains("last"));
    throwing.release.countDown();
    await().atMost(WAIT).until(() -> throwing.calls().contains("last"));
    assertThat(throwing.calls()).containsExactly("first", "runtime", "linkage", "overflow", "last");
  }

  /** Blocks in its first call until released, then throws for the pods named after a kind of failure. */
  private static final class Throwing implements PodListener {
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    private final List<String> calls = new ArrayList<>();

    synchronized List<String> calls() {
      return List.copyOf(calls);
    }

    @Override
    public void registerPod(Pod pod) {
      String name = pod.getMetadata().getName();
      synchronized (this) {
        calls.add(name);
      }
      if (name.equals("first")) {
        entered.countDown();
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      Map<String, Function<String, Throwable>> failures = Map.of("runtime", IllegalStateException::new,
          "linkage", NoClassDefFoundError::new, "overflow", m -> new StackOverflowError(m));
      Optional.ofNullable(failures.get(name)).ifPresent(f -> {
        Throwable t = f.apply("thrown for " + name);
        if (t instanceof RuntimeException r) {
          throw r;
        }
        throw (Error) t;
      });
    }

    @Override
    public void unregisterPod(Pod pod) {
    }
  }
}
