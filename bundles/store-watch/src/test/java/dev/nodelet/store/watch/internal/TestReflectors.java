package dev.nodelet.store.watch.internal;

import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.kube.watch.Reflectors;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.function.Supplier;

/** What {@code nodelet-kube} registers beside its client: one reflector engine over it, built on first use. */
final class TestReflectors implements Supplier<Reflectors>, AutoCloseable {

  private final Supplier<KubernetesClient> client;
  private ReflectorEngine engine;

  TestReflectors(Supplier<KubernetesClient> client) {
    this.client = client;
  }

  @Override
  public synchronized Reflectors get() {
    if (engine == null) {
      engine = ReflectorEngine.builder(client.get()).build();
    }
    return engine;
  }

  /** Closes the engine (before the client and the server): no watch and no engine thread is left. */
  @Override
  public synchronized void close() {
    if (engine != null) {
      engine.close();
      engine = null;
    }
  }
}
