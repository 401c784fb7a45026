package dev.nodelet.benchmarks;

import java.nio.file.Path;
import java.nio.file.Files;
import java.io.IOException;
import dev.nodelet.objectcache.CacheSyncException;
import dev.nodelet.objectcache.ObjectManager;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.IntStream;

/** Objects and pods shared by the benchmarks. */
final class Fixtures {

  static final String NAMESPACE = "default";

  private Fixtures() {
  }

  static String name(int i) {
    return "cm-" + i;
  }

  static ConfigMap configMap(String name, String value) {
    return new ConfigMapBuilder().withNewMetadata().withNamespace(NAMESPACE).withName(name).endMetadata()
        .addToData("key", value).build();
  }

  /** Creates {@code count} ConfigMaps cm-0... on the server, with four writers. */
  static void createConfigMaps(KubernetesClient client, int first, int count) {
    ExecutorService writers = Executors.newFixedThreadPool(4);
    try {
      CompletableFuture.allOf(IntStream.range(first, first + count)
          .mapToObj(i -> CompletableFuture.runAsync(
              () -> client.configMaps().resource(configMap(name(i), "v0")).create(), writers))
          .toArray(CompletableFuture[]::new)).join();
    } finally {
      writers.shutdownNow();
    }
  }

  /** A pod that references the given ConfigMaps as volumes. */
  static Pod pod(String name, String uid, List<String> configMaps) {
    List<Volume> volumes = new ArrayList<>();
    for (String cm : configMaps) {
      volumes.add(new VolumeBuilder().withName("v-" + cm).withNewConfigMap().withName(cm).endConfigMap().build());
    }
    return new PodBuilder().withNewMetadata().withNamespace(NAMESPACE).withName(name).withUid(uid).endMetadata()
        .withNewSpec().withNodeName("node-a").withVolumes(volumes).endSpec().build();
  }

  /** Pods of ten references each that together reference cm-first ... cm-(first+count-1). */
  static List<Pod> podsReferencing(int first, int count) {
    List<Pod> pods = new ArrayList<>();
    for (int start = first; start < first + count; start += 10) {
      List<String> names = new ArrayList<>();
      for (int i = start; i < Math.min(start + 10, first + count); i++) {
        names.add(name(i));
      }
      pods.add(pod("pod-" + start, "uid-" + start, names));
    }
    return pods;
  }

  /** Gets an object until its watch has synced (a get waits at most the sync wait, then fails). */
  static ConfigMap getSynced(ObjectManager<ConfigMap> manager, String name) {
    long deadline = System.nanoTime() + 120_000_000_000L;
    while (true) {
      try {
        return manager.get(NAMESPACE, name);
      } catch (CacheSyncException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
      }
    }
  }

  /** Deletes a temporary folder and what it holds; what cannot be deleted is logged and left. */
  static void deleteQuietly(Path folder) {
    try (var files = Files.walk(folder)) {
      files.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(f -> f.toFile().delete());
    } catch (IOException e) {
      Main.log("cannot delete %s: %s", folder, e);
    }
  }
}
