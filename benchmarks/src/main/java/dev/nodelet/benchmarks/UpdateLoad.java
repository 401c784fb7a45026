package dev.nodelet.benchmarks;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * The load of the update-visibility measures: updates of ConfigMaps of {@link Fixtures#NAMESPACE} chosen at random
 * (always the same sequence), sent at a fixed rate on a schedule that a slow update does not move (open loop).
 */
final class UpdateLoad {

  /** What follows one update: told the new resourceVersion and when the update was sent ({@code nanoTime}). */
  interface Sent {
    void sent(long resourceVersion, long sentNanos);
  }

  private final KubernetesClient admin;
  private final Map<String, ConfigMap> latest = new HashMap<>();

  /** Reads the ConfigMaps as they are now: each update changes the version it last wrote. */
  UpdateLoad(KubernetesClient admin) {
    this.admin = admin;
    admin.configMaps().inNamespace(Fixtures.NAMESPACE).list().getItems()
        .forEach(cm -> latest.put(cm.getMetadata().getName(), cm));
  }

  /**
   * Sends {@code updates} updates, {@code rate} a second, each of one of ConfigMaps 0 to {@code count - 1}.
   *
   * @param before called with the ConfigMap's name just before its update is sent; returns what is told once it was
   */
  void run(int count, int rate, int updates, Function<String, Sent> before) {
    SplittableRandom random = new SplittableRandom(42);
    long period = 1_000_000_000L / rate;
    long start = System.nanoTime();
    for (int i = 0; i < updates; i++) {
      long wait = start + i * period - System.nanoTime();
      if (wait > 0) {
        LockSupport.parkNanos(wait);
      }
      String name = Fixtures.name(random.nextInt(count));
      Sent sent = before.apply(name);
      ConfigMap next = new ConfigMapBuilder(latest.get(name)).addToData("key", "u" + i).build();
      long sentNanos = System.nanoTime();
      ConfigMap updated = admin.configMaps().resource(next).update();
      latest.put(name, updated);
      sent.sent(Long.parseLong(updated.getMetadata().getResourceVersion()), sentNanos);
    }
  }
}
