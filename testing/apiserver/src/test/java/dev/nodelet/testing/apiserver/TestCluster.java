package dev.nodelet.testing.apiserver;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import java.util.function.UnaryOperator;

/**
 * Where a behaviour test runs: the embedded API server, or a real cluster when {@code NODELET_TEST_KUBECONFIG} names
 * a kubeconfig (then each test gets a fresh namespace, deleted afterwards).
 */
final class TestCluster implements AutoCloseable {

  static final String KUBECONFIG_ENV = "NODELET_TEST_KUBECONFIG";

  final EmbeddedApiServer server; // null on a real cluster
  final KubernetesClient client;
  final String namespace;
  /** A suffix that keeps cluster-scoped test objects apart on a shared cluster. */
  final String suffix = UUID.randomUUID().toString().substring(0, 6);

  private TestCluster(EmbeddedApiServer server, KubernetesClient client, String namespace) {
    this.server = server;
    this.client = client;
    this.namespace = namespace;
  }

  static boolean isReal() {
    String path = System.getenv(KUBECONFIG_ENV);
    return path != null && !path.isBlank();
  }

  static TestCluster start() {
    return start(b -> b, c -> c);
  }

  static TestCluster start(UnaryOperator<EmbeddedApiServer.Builder> server, UnaryOperator<Config> config) {
    if (isReal()) {
      Config c;
      try {
        c = Config.fromKubeconfig(null, Files.readString(Path.of(System.getenv(KUBECONFIG_ENV))),
            System.getenv(KUBECONFIG_ENV));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      KubernetesClient client = new KubernetesClientBuilder().withConfig(config.apply(c)).build();
      String ns = "nodelet-test-" + UUID.randomUUID().toString().substring(0, 8);
      client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
      return new TestCluster(null, client, ns);
    }
    EmbeddedApiServer s = server.apply(EmbeddedApiServer.builder()).build().start();
    return new TestCluster(s, new KubernetesClientBuilder().withConfig(config.apply(s.clientConfig())).build(),
        "test");
  }

  @Override
  public void close() {
    if (server == null) {
      client.namespaces().withName(namespace).delete();
    }
    client.close();
    if (server != null) {
      server.close();
    }
  }
}
