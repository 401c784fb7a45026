package dev.nodelet.kube.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client {@link KubeClientFactory} builds, against the embedded API server and its 100 streams per HTTP/2
 * connection: many watches over few connections and a fixed number of threads, nothing left once closed.
 */
class Http2TransportTest {

  private static final int WATCHES = 250;
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir
  Path dir;

  @AutoClose // after the test's @AfterEach methods
  private EmbeddedApiServer server;
  private final List<CompletableFuture<HttpResponse<AsyncBody>>> watches = new ArrayList<>();

  @AfterEach
  void stop() {
    watches.forEach(w -> w.thenAccept(response -> response.body().cancel()));
  }

  @Test
  void manyWatchesOverTlsShareFewHttp2ConnectionsAndFixedThreads() {
    server = EmbeddedApiServer.builder().tls().build().start();
    KubeClientFactory factory = new KubeClientFactory();
    KubernetesClient client = factory.create(KubeSettings.builder()
        .kubeconfig(server.writeKubeconfig(dir.resolve("kubeconfig")).toString()).nodeName("node-a").http2(true)
        .build());
    String threadPrefix = KubeClientFactory.THREAD_NAME_PREFIX + "1-http";
    try {
      createConfigMaps(client, WATCHES);
      openWatches(client.getHttpClient(), 0, 10);
      await().atMost(WAIT).until(() -> server.openWatches("configmaps") == 10);
      long threadsAtTen = threads(threadPrefix);

      openWatches(client.getHttpClient(), 10, WATCHES);
      await().atMost(WAIT).until(() -> server.openWatches("configmaps") == WATCHES);
      assertThat(watches).allSatisfy(w -> assertThat(w.join().code()).isEqualTo(200));
      int limit = EmbeddedApiServer.MAX_CONCURRENT_STREAMS;
      assertThat(server.openConnections()).isLessThanOrEqualTo((WATCHES + limit - 1) / limit + 2);
      assertThat(server.requestsByProtocol()).containsOnlyKeys("h2");
      assertThat(threads(threadPrefix)).isEqualTo(threadsAtTen).isLessThanOrEqualTo(Http2Transport.IO_THREADS + 1);
    } finally {
      client.close();
    }
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(server.openConnections()).isZero();
      assertThat(threads(KubeClientFactory.THREAD_NAME_PREFIX + "1-")).isZero();
    });
  }

  @Test
  void plainHttpUsesHttp11() {
    server = EmbeddedApiServer.builder().build().start();
    KubernetesClient client = new KubeClientFactory().create(
        KubeSettings.builder().masterUrl(server.url()).nodeName("node-a").http2(true).build());
    try {
      createConfigMaps(client, 3);
      openWatches(client.getHttpClient(), 0, 3);
      await().atMost(WAIT).until(() -> server.openWatches("configmaps") == 3);
      assertThat(client.configMaps().inNamespace("default").withName("cm-0").get().getData())
          .containsEntry("key", "value");
      assertThat(server.requestsByProtocol()).containsOnlyKeys("http/1.1");
    } finally {
      client.close();
    }
    await().atMost(WAIT).until(() -> server.openConnections() == 0);
  }

  /** Written by the client under test: the server's connection count is then that client's alone. */
  private static void createConfigMaps(KubernetesClient client, int count) {
    IntStream.range(0, count).forEach(i -> client.configMaps().inNamespace("default").resource(
        new ConfigMapBuilder().withNewMetadata().withName("cm-" + i).endMetadata().withData(Map.of("key", "value"))
            .build()).create());
  }

  /** Watches as the reflector opens them: one streaming GET per object, its bytes consumed as they come. */
  private void openWatches(HttpClient http, int from, int to) {
    for (int i = from; i < to; i++) {
      var request = http.newHttpRequestBuilder().uri(server.url() + "/api/v1/namespaces/default/configmaps"
          + "?watch=true&allowWatchBookmarks=true&fieldSelector=metadata.name%3Dcm-" + i).build();
      watches.add(http.consumeBytes(request, (buffers, body) -> body.consume())
          .thenApply(response -> {
            response.body().consume();
            return response;
          }));
    }
  }

  private static long threads(String prefix) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
  }
}
