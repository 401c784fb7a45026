package dev.nodelet.benchmarks;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.kube.KubeClients;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.persistence.Persistence;
import dev.nodelet.store.watch.WatchStoreStrategy;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * {@code count} watched ConfigMaps cm-0... either the Nodelet way (the ConfigMap manager on the watch strategy,
 * registered pods of 10 references each) or the fabric8 way (one {@code withName(...).inform()} informer per
 * object), with a get for each.
 */
abstract class Watched implements AutoCloseable {

  final KubernetesClient client;

  private Watched(KubernetesClient client) {
    this.client = client;
  }

  /** A client of the server's kubeconfig as a Java user would build one: fabric8's defaults otherwise. */
  static KubernetesClient client(ApiServerProcess server) {
    try {
      Config config = new ConfigBuilder(Config.fromKubeconfig(Files.readString(server.kubeconfig())))
          .withNamespace(Fixtures.NAMESPACE).withRequestRetryBackoffLimit(0)
          // a server busy opening thousands of watches is slow to accept on a loaded machine
          .withConnectionTimeout(60_000).withRequestTimeout(60_000).build();
      return new KubernetesClientBuilder().withConfig(config).build();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + server.kubeconfig(), e);
    }
  }

  /** The client Nodelet runs with: the one the {@code nodelet-kube} component builds (bounded thread pools). */
  static KubernetesClient nodeletClient(String url) {
    return KubeClients.builder().masterUrl(url).http2(true).build();
  }

  /**
   * The same for an in-process server: over TLS, through a kubeconfig with its CA and token, written to a temporary
   * file that is deleted once the client has read it.
   */
  static KubernetesClient nodeletClient(EmbeddedApiServer server) {
    if (!server.isTls()) {
      return nodeletClient(server.url());
    }
    Path kubeconfig = null;
    try {
      kubeconfig = Files.createTempFile("nodelet-benchmarks-", ".kubeconfig");
      server.writeKubeconfig(kubeconfig);
      return KubeClients.builder().kubeconfig(kubeconfig.toString()).http2(true).build();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write a kubeconfig for " + server.url(), e);
    } finally {
      if (kubeconfig != null) {
        kubeconfig.toFile().delete();
      }
    }
  }

  /** The same, from the server's kubeconfig (its URL, CA and token). */
  static KubernetesClient nodeletClient(ApiServerProcess server) {
    return KubeClients.builder().kubeconfig(server.kubeconfig().toString()).http2(true).build();
  }

  /** Reads an object from the local cache. */
  abstract ConfigMap get(String name);

  /** How many watches were re-established so far, counted by the client as each starts; -1 if not counted. */
  long restarts() {
    return -1;
  }

  /** Watches the objects and returns once every one has synced. */
  abstract Watched watch(int count);

  @Override
  public void close() {
    client.close();
  }

  static Watched nodelet(ApiServerProcess server) {
    return nodelet(server, null);
  }

  /** The Nodelet way, keeping the objects in {@code persistence} too (null: not on disk). */
  static Watched nodelet(ApiServerProcess server, Persistence persistence) {
    return new Watched(nodeletClient(server)) {
      private ReflectorEngine reflectors;
      private WatchStoreStrategy strategy;
      private SwitchableObjectManager<ConfigMap> manager;

      @Override
      Watched watch(int count) {
        // the engine the strategy would build for itself (same backoff), held here to read its count of restarts
        reflectors = ReflectorEngine.builder(client).backoff(Duration.ofMillis(250), Duration.ofSeconds(2)).build();
        WatchStoreStrategy.Builder builder = WatchStoreStrategy.builder(client).reflectors(reflectors);
        if (persistence != null) {
          builder.persistence(persistence);
        }
        strategy = builder.build();
        manager = ObjectManagers.configMaps(client).build();
        manager.useStrategy("watch", strategy);
        Fixtures.podsReferencing(0, count).forEach(manager::registerPod);
        for (int i = 0; i < count; i++) {
          Fixtures.getSynced(manager, Fixtures.name(i));
        }
        return this;
      }

      @Override
      ConfigMap get(String name) {
        return manager.get(Fixtures.NAMESPACE, name);
      }

      @Override
      long restarts() {
        return reflectors.restarts();
      }

      @Override
      public void close() {
        if (manager != null) {
          manager.close();
          strategy.close();
        }
        if (reflectors != null) {
          reflectors.close();
        }
        super.close();
      }
    };
  }

  /**
   * One fabric8 informer per object, on the client Nodelet runs with: with fabric8's default JDK client every stream
   * shares one HTTP/2 connection, and past the server's 100 streams the informers stop ({@code too many concurrent
   * streams}).
   */
  static Watched informers(ApiServerProcess server) {
    return new Watched(nodeletClient(server)) {
      private final List<SharedIndexInformer<ConfigMap>> informers = new ArrayList<>();
      private final Function<String, SharedIndexInformer<ConfigMap>> byName = name ->
          informers.get(Integer.parseInt(name.substring(3)));

      @Override
      Watched watch(int count) {
        // all started at once, as the watch strategy's references are, then awaited
        List<CompletableFuture<Void>> started = new ArrayList<>();
        for (int i = 0; i < count; i++) {
          SharedIndexInformer<ConfigMap> informer = client.configMaps().inNamespace(Fixtures.NAMESPACE)
              .withName(Fixtures.name(i)).runnableInformer(0);
          informers.add(informer);
          started.add(informer.start().toCompletableFuture());
        }
        CompletableFuture.allOf(started.toArray(CompletableFuture[]::new)).join();
        return this;
      }

      @Override
      ConfigMap get(String name) {
        return byName.apply(name).getStore().getByKey(Cache.namespaceKeyFunc(Fixtures.NAMESPACE, name));
      }

      @Override
      public void close() {
        informers.forEach(SharedIndexInformer::close);
        super.close();
      }
    };
  }
}
