package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.kube.KubeClients;
import dev.nodelet.pods.PodBundles;
import dev.nodelet.store.watch.WatchStoreStrategy;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;
import org.osgi.service.cm.Configuration;

/**
 * Churn: 100 pods, each one bundle and one ConfigMap (in its env and as a volume), created and deleted as the API
 * server and the pod source hand them over; afterwards nothing of them is left: no bundle, no configuration, no
 * folder, no watch on the API server, no thread more than before. The ConfigMap manager runs on the watch strategy,
 * and the runtime follows its watch as the component does.
 */
class PodChurnTest {

  private static final int PODS = 100;

  @TempDir
  Path dir;
  PodsHarness h;
  KubernetesClient watching; // Nodelet's client: a watch per ConfigMap, spread over connections of 100 streams
  WatchStoreStrategy strategy;
  ObjectWatches watches;

  @BeforeEach
  void start() throws Exception {
    h = new PodsHarness(dir);
    watching = KubeClients.builder().masterUrl(h.server.url()).http2(true).build();
    strategy = WatchStoreStrategy.builder(watching).build();
    h.configMaps.useStrategy("watch", strategy);
    watches = new ObjectWatches();
    watches.<ConfigMap>follow(false, h.configMaps::watch, h.runtime::objectChanged);
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
  }

  @AfterEach
  void stop() throws Exception {
    watches.close();
    h.close();
    strategy.close();
    watching.close();
  }

  @Test
  void hundredPodsCreatedAndDeletedLeaveNothingBehind() throws Exception {
    churn("warm", 1); // once, so that the pools made on first use (events, stops, HTTP) are in the baseline
    Set<String> baseline = threads();

    List<Pod> pods = create("churn", PODS);
    assertThat(h.felix.context().getBundles()).filteredOn(b -> b.getLocation().startsWith(PodBundles.LOCATION_SCHEME))
        .hasSize(PODS).allMatch(b -> b.getState() == Bundle.ACTIVE);
    assertThat(h.status("churn-42").getPhase()).isEqualTo("Running");
    assertThat(podConfigurations()).hasSize(PODS);
    assertThat(folders()).hasSize(PODS);
    Awaitility.await().atMost(Duration.ofSeconds(20))
        .until(() -> h.server.openWatches("configmaps") >= PODS); // one per ConfigMap, opened by the strategy

    delete(pods);

    assertThat(h.felix.context().getBundles()).noneMatch(b -> b.getLocation().startsWith(PodBundles.LOCATION_SCHEME));
    assertThat(podConfigurations()).isEmpty();
    assertThat(folders()).isEmpty();
    assertThat(h.client.pods().inNamespace("default").list().getItems()).isEmpty();
    Awaitility.await("the ConfigMaps' watches closed on the API server").atMost(Duration.ofSeconds(10))
        .until(() -> h.server.openWatches("configmaps") == 0);
    Awaitility.await("threads back to the baseline").atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      Set<String> now = threads();
      assertThat(now.size()).as("threads now, beyond the baseline: %s", difference(now, baseline))
          .isLessThanOrEqualTo(baseline.size());
    });
  }

  private void churn(String prefix, int count) throws Exception {
    delete(create(prefix, count));
  }

  /** ConfigMaps and pods made in the API server, handed to the managers and the runtime as the pod source does. */
  private List<Pod> create(String prefix, int count) throws Exception {
    List<Pod> pods = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String name = prefix + "-" + i;
      h.client.configMaps().inNamespace("default").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
          .endMetadata().addToData("greeting", "hello " + i).build()).create();
      Pod pod = new PodBuilder().withNewMetadata().withName(name).withNamespace("default").endMetadata()
          .withNewSpec().withNodeName(PodsHarness.NODE).addNewContainer().withName("app")
          .withImage("mvn:org.example/hello/1.0.0").addNewEnv().withName("GREETING").withNewValueFrom()
          .withNewConfigMapKeyRef().withName(name).withKey("greeting").endConfigMapKeyRef().endValueFrom().endEnv()
          .endContainer().addNewVolume().withName("config").withNewConfigMap().withName(name).endConfigMap()
          .endVolume().endSpec().build();
      Pod created = h.client.pods().inNamespace("default").resource(pod).create();
      h.configMaps.registerPod(created);
      h.secrets.registerPod(created);
      h.runtime.podUpdated(created);
      pods.add(created);
    }
    h.idle();
    // the pods whose ConfigMap the strategy had not synced yet wait (ContainerCreating) and are retried
    Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> h.client.pods().inNamespace("default").list()
        .getItems().stream().filter(p -> p.getMetadata().getName().startsWith(prefix + "-"))
        .filter(p -> p.getStatus() != null && "Running".equals(p.getStatus().getPhase())).count() == count);
    return pods;
  }

  /** As kubectl deletes them: marked by the API server, stopped and released by the node, then unregistered. */
  private void delete(List<Pod> pods) throws Exception {
    for (Pod pod : pods) {
      h.client.pods().inNamespace("default").withName(pod.getMetadata().getName()).delete();
    }
    h.client.pods().inNamespace("default").list().getItems().forEach(h.runtime::podUpdated); // marked
    h.idle();
    assertThat(h.client.pods().inNamespace("default").list().getItems()).isEmpty(); // released by the node
    for (Pod pod : pods) {
      h.configMaps.unregisterPod(pod);
      h.secrets.unregisterPod(pod);
      h.runtime.podRemoved(pod);
    }
    h.idle();
  }

  private List<Configuration> podConfigurations() throws Exception {
    Configuration[] all = h.felix.configurationAdmin.listConfigurations(null);
    return all == null ? List.of() : Arrays.stream(all).filter(c -> c.getBundleLocation() != null
        && c.getBundleLocation().startsWith(PodBundles.LOCATION_SCHEME)
        || c.getPid().startsWith("dev.nodelet.pod.")).toList();
  }

  private List<Path> folders() throws Exception {
    Path pods = h.work.resolve("pods");
    if (!Files.isDirectory(pods)) {
      return List.of();
    }
    try (Stream<Path> entries = Files.list(pods)) {
      return entries.toList();
    }
  }

  /**
   * The live threads, by name and id, but those of the test client's HTTP pool: a cached pool that grows with the
   * requests in flight (the status writes go several at a time) and ends its idle threads after a minute.
   */
  private static Set<String> threads() {
    return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
        .filter(t -> !t.getName().startsWith("JdkHttpClientFactory-"))
        .map(t -> t.getName() + "#" + t.getId()).collect(Collectors.toCollection(TreeSet::new));
  }

  private static Set<String> difference(Set<String> now, Set<String> baseline) {
    Set<String> extra = new TreeSet<>(now);
    extra.removeAll(baseline);
    return extra;
  }
}
