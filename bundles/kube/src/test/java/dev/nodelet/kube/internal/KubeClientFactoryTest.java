package dev.nodelet.kube.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

class KubeClientFactoryTest {

  private static final String KUBECONFIG = String.join("\n",
      "apiVersion: v1",
      "kind: Config",
      "clusters:",
      "- name: blue",
      "  cluster:",
      "    server: https://blue.example:6443",
      "- name: green",
      "  cluster:",
      "    server: https://green.example:6443",
      "users:",
      "- name: operator",
      "  user:",
      "    token: token-from-kubeconfig",
      "contexts:",
      "- name: blue",
      "  context:",
      "    cluster: blue",
      "    user: operator",
      "- name: green",
      "  context:",
      "    cluster: green",
      "    user: operator",
      "    namespace: apps",
      "current-context: blue",
      "");

  private final KubeClientFactory factory = new KubeClientFactory();

  @TempDir
  Path dir;

  private Path kubeconfig() throws Exception {
    return Files.writeString(dir.resolve("kubeconfig"), KUBECONFIG);
  }

  @Test
  void masterUrlAloneCarriesNoCredentials() {
    Config config = factory.clientConfig(KubeSettings.builder()
        .masterUrl("http://127.0.0.1:8001")
        .nodeName("node-a")
        .requestTimeout(Duration.ofMillis(1234))
        .connectionTimeout(Duration.ofMillis(567))
        .build());

    assertThat(config.getMasterUrl()).isEqualTo("http://127.0.0.1:8001/");
    assertThat(config.getAutoOAuthToken()).isNull();
    assertThat(config.getRequestTimeout()).isEqualTo(1234);
    assertThat(config.getConnectionTimeout()).isEqualTo(567);
  }

  @Test
  void aRequestToAnUnreachableServerFailsWithoutRetries() throws Exception {
    int port;
    try (ServerSocket reserved = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = reserved.getLocalPort();
    }
    KubeSettings settings = KubeSettings.builder().masterUrl("http://127.0.0.1:" + port).nodeName("n").build();
    assertThat(factory.clientConfig(settings).getRequestRetryBackoffLimit()).isZero();
    try (KubernetesClient client = factory.create(settings)) {
      assertThatThrownBy(() -> client.configMaps().inNamespace("default").withName("a").get())
          .isInstanceOf(KubernetesClientException.class).hasStackTraceContaining("java.net.ConnectException");
    }
  }

  @Test
  void aFailedRequestIsSentOnceWhereFabric8sDefaultSendsItAgain() throws Exception {
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start()) {
      KubeSettings settings = KubeSettings.builder().masterUrl(server.url()).nodeName("n").build();
      server.failNext(Verb.GET, "configmaps", 100, 503);
      try (KubernetesClient client = factory.create(settings)) {
        assertThatThrownBy(() -> client.configMaps().inNamespace("default").withName("a").get())
            .isInstanceOf(KubernetesClientException.class);
      }
      assertThat(server.requestCount(Verb.GET, "configmaps")).isOne();

      // the same request with fabric8's retries (a short backoff), to show the count would catch them
      Config retrying = factory.clientConfig(settings);
      retrying.setRequestRetryBackoffLimit(3);
      retrying.setRequestRetryBackoffInterval(1);
      try (KubernetesClient client = new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(retrying)
          .build()) {
        assertThatThrownBy(() -> client.configMaps().inNamespace("default").withName("a").get())
            .isInstanceOf(KubernetesClientException.class);
      }
      assertThat(server.requestCount(Verb.GET, "configmaps")).isEqualTo(1 + 4);
    }
  }

  @Test
  void kubeconfigUsesItsCurrentContextOrTheConfiguredOne() throws Exception {
    Path file = kubeconfig();

    Config current = factory.clientConfig(KubeSettings.builder().kubeconfig(file.toString()).nodeName("n").build());
    Config green = factory.clientConfig(
        KubeSettings.builder().kubeconfig(file.toString()).context("green").nodeName("n").build());

    assertThat(current.getMasterUrl()).isEqualTo("https://blue.example:6443/");
    assertThat(current.getAutoOAuthToken()).isEqualTo("token-from-kubeconfig");
    assertThat(green.getMasterUrl()).isEqualTo("https://green.example:6443/");
    assertThat(green.getNamespace()).isEqualTo("apps");
  }

  @Test
  void masterUrlWinsOverTheKubeconfigServerAndKeepsItsCredentials() throws Exception {
    Config config = factory.clientConfig(KubeSettings.builder()
        .kubeconfig(kubeconfig().toString())
        .masterUrl("https://override.example:443")
        .nodeName("n")
        .build());

    assertThat(config.getMasterUrl()).isEqualTo("https://override.example:443/");
    assertThat(config.getAutoOAuthToken()).isEqualTo("token-from-kubeconfig");
  }

  @Test
  void unknownContextIsRejected() throws Exception {
    KubeSettings settings = KubeSettings.builder().kubeconfig(kubeconfig().toString()).context("red").nodeName("n")
        .build();

    assertThatThrownBy(() -> factory.clientConfig(settings))
        .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.key()).isEqualTo("context"))
        .hasMessageContaining("'red'");
  }

  @Test
  void malformedKubeconfigIsRejectedWithoutQuotingIt() throws Exception {
    Path file = Files.writeString(dir.resolve("broken"), "users: [ token: hunter2-secret\n  - {{{");
    KubeSettings settings = KubeSettings.builder().kubeconfig(file.toString()).nodeName("n").build();

    assertThatThrownBy(() -> factory.create(settings))
        .isInstanceOfSatisfying(InvalidSettingException.class,
            e -> assertThat(e.key()).isEqualTo("kubeconfig.path"))
        .hasMessageNotContaining("hunter2");
  }

  /** Either transport: HTTP/2 (Jetty, HTTP/1.1 over plain HTTP), the default, or HTTP/1.1 over the JDK client. */
  @ParameterizedTest(name = "http2.enabled={0}")
  @ValueSource(booleans = {true, false})
  void clientReachesTheServerAndItsThreadsEndWhenClosed(boolean http2) throws Exception {
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient reader = server.newClient()) {
      KubernetesClient client = factory.create(
          KubeSettings.builder().masterUrl(server.url()).nodeName("node-a").http2(http2).build());
      CompletableFuture<String> handlerThread = new CompletableFuture<>();
      try {
        client.configMaps().inNamespace("default").resource(new ConfigMapBuilder()
            .withNewMetadata().withName("written-by-nodelet").endMetadata()
            .withData(Map.of("key", "value"))
            .build()).create();
        // informer handlers run in the client's task executor
        SharedIndexInformer<ConfigMap> informer = client.configMaps().inNamespace("default")
            .inform(new ResourceEventHandler<>() {
              @Override
              public void onAdd(ConfigMap configMap) {
                handlerThread.complete(Thread.currentThread().getName());
              }

              @Override
              public void onUpdate(ConfigMap oldConfigMap, ConfigMap newConfigMap) {
              }

              @Override
              public void onDelete(ConfigMap configMap, boolean deletedFinalStateUnknown) {
              }
            });
        assertThat(handlerThread.get(10, TimeUnit.SECONDS)).startsWith(KubeClientFactory.THREAD_NAME_PREFIX);
        informer.stop();
      } finally {
        client.close();
      }

      ConfigMap read = reader.configMaps().inNamespace("default").withName("written-by-nodelet").get();
      assertThat(read.getData()).containsEntry("key", "value");
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet())
          .noneMatch(thread -> thread.getName().startsWith(KubeClientFactory.THREAD_NAME_PREFIX)));

      // a request sent after the close (a consumer that has not heard of it yet) fails, and starts none of the
      // client's threads again: nothing would stop them
      HttpClient http = client.getHttpClient();
      assertThatThrownBy(() -> http.sendAsync(http.newHttpRequestBuilder().uri(server.url()
          + "/api/v1/namespaces/default/configmaps").build(), String.class)).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("closed");
      assertThat(Thread.getAllStackTraces().keySet())
          .noneMatch(thread -> thread.getName().startsWith(KubeClientFactory.THREAD_NAME_PREFIX));
    }
  }
}
