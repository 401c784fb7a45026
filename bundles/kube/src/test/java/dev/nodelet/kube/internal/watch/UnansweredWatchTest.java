package dev.nodelet.kube.internal.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.kube.internal.KubeClientFactory;
import dev.nodelet.kube.internal.KubeSettings;
import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.testing.apiserver.internal.ServingCertificates;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.PfxOptions;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A watch whose request reaches a server that never answers, on a connection that stays open: it fails once its
 * response deadline passes and restarts, over HTTP/1.1 and over HTTP/2 streams alike.
 */
class UnansweredWatchTest {

  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines
  private static final Duration DEADLINE = Duration.ofMillis(300);

  private final List<AutoCloseable> resources = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
  }

  @Test
  void aWatchOverHttp11ThatGetsNoResponseFailsAtItsDeadlineAndRestarts() throws IOException {
    ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    AtomicInteger requests = new AtomicInteger();
    List<Socket> accepted = new java.util.concurrent.CopyOnWriteArrayList<>();
    Thread acceptor = new Thread(() -> acceptAndNeverAnswer(silent, requests, accepted), "silent-server");
    acceptor.setDaemon(true);
    acceptor.start();
    resources.add(() -> {
      silent.close();
      for (Socket socket : accepted) {
        socket.close();
      }
      acceptor.join(TimeUnit.SECONDS.toMillis(10));
    });

    KubernetesClient client = client(KubeSettings.builder().nodeName("node-a")
        .masterUrl("http://127.0.0.1:" + silent.getLocalPort()).build());
    assertUnansweredWatchesFailAndRestart(client, requests::get);
    // each restart's request went out on a connection of its own: the unanswered ones stay busy until closed
    assertThat(accepted).hasSizeGreaterThanOrEqualTo(2);
  }

  @Test
  void aWatchOverAnHttp2StreamThatGetsNoResponseFailsAtItsDeadlineAndRestarts() throws Exception {
    InetAddress loopback = InetAddress.getLoopbackAddress();
    ServingCertificates certificates = ServingCertificates.issue(loopback);
    Vertx vertx = Vertx.vertx();
    resources.add(() -> vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS));
    AtomicInteger requests = new AtomicInteger();
    AtomicInteger overHttp2 = new AtomicInteger();
    HttpServer server = vertx.createHttpServer(new HttpServerOptions().setHost(loopback.getHostAddress()).setPort(0)
            .setSsl(true).setUseAlpn(true).setAlpnVersions(List.of(HttpVersion.HTTP_2))
            .setKeyCertOptions(new PfxOptions()
                .setValue(io.vertx.core.buffer.Buffer.buffer(certificates.servingKeyStore()))
                .setPassword(certificates.storePassword())))
        .requestHandler(request -> {
          requests.incrementAndGet(); // and no answer, ever
          if (request.version() == HttpVersion.HTTP_2) {
            overHttp2.incrementAndGet();
          }
        })
        .listen().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);

    Path kubeconfig = Files.createTempFile("unanswered-watch", ".kubeconfig");
    resources.add(() -> Files.deleteIfExists(kubeconfig));
    Files.writeString(kubeconfig, String.join("\n",
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: silent",
        "  cluster:",
        "    server: https://" + loopback.getHostAddress() + ":" + server.actualPort(),
        "    certificate-authority-data: "
            + Base64.getEncoder().encodeToString(certificates.caPem().getBytes(StandardCharsets.UTF_8)),
        "contexts:",
        "- name: silent",
        "  context: {cluster: silent, user: silent}",
        "current-context: silent",
        "users:",
        "- name: silent",
        "  user: {}",
        ""));
    KubernetesClient client = client(KubeSettings.builder().nodeName("node-a").kubeconfig(kubeconfig.toString())
        .build());
    assertUnansweredWatchesFailAndRestart(client, requests::get);
    assertThat(overHttp2.get()).isEqualTo(requests.get());
  }

  private void assertUnansweredWatchesFailAndRestart(KubernetesClient client, java.util.function.IntSupplier requests) {
    Engine engine = new Engine(client, EngineSettings.builder().responseTimeout(DEADLINE)
        .backoff(Duration.ofMillis(20), Duration.ofMillis(100)).build());
    resources.add(engine);
    ReflectorTest.Recorder recorder = new ReflectorTest.Recorder();
    long start = System.nanoTime();
    Reflector<ConfigMap> reflector = engine.reflector(ConfigMap.class).namespace("default").listener(recorder)
        .start();

    await().atMost(WAIT).until(() -> recorder.errors.size() >= 2 && requests.getAsInt() >= 3);
    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(2 * DEADLINE.toNanos());
    assertThat(recorder.errors).allSatisfy(error -> {
      assertThat(error.status()).isZero();
      assertThat(error.getMessage()).contains("configmaps in namespace default", "no response",
          DEADLINE.toMillis() + " ms");
    });
    assertThat(reflector.isSynced()).isFalse();
    assertThat(recorder.events).isEmpty();
  }

  private KubernetesClient client(KubeSettings settings) {
    KubernetesClient client = new KubeClientFactory().create(settings);
    resources.add(client);
    return client;
  }

  /** Reads each request's head and answers nothing, keeping the connection open. */
  private static void acceptAndNeverAnswer(ServerSocket server, AtomicInteger requests, List<Socket> accepted) {
    while (!server.isClosed()) {
      try {
        Socket socket = server.accept();
        accepted.add(socket);
        Thread reader = new Thread(() -> {
          try (InputStream in = socket.getInputStream()) {
            byte[] buffer = new byte[8192];
            int read;
            while ((read = in.read(buffer)) != -1) {
              if (new String(buffer, 0, read, StandardCharsets.ISO_8859_1).startsWith("GET ")) {
                requests.incrementAndGet();
              }
            }
          } catch (IOException e) {
            // closed by the test's end
          }
        }, "silent-server-connection");
        reader.setDaemon(true);
        reader.start();
      } catch (IOException e) {
        return; // closed by the test's end
      }
    }
  }
}
