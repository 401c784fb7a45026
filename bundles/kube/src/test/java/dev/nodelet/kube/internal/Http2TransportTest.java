package dev.nodelet.kube.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.kube.internal.watch.EarlyBody;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import dev.nodelet.testing.apiserver.internal.ServingCertificates;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client {@link KubeClientFactory} builds, against the embedded API server and its 100 streams per HTTP/2
 * connection: many watches over few connections and a fixed number of threads, events delivered, a cancelled watch
 * ended at the server (also before its response), nothing left once closed.
 */
class Http2TransportTest {

  private static final int WATCHES = 250;
  private static final Duration WAIT = Duration.ofSeconds(60);
  /** The opening deadline of the clients of {@link ClosingTlsServer}s: short, so that a test can wait for it. */
  private static final Duration OPENING_TIMEOUT = Duration.ofSeconds(2);

  @TempDir
  Path dir;

  @AutoClose // after the test's @AfterEach methods
  private EmbeddedApiServer server;
  private final List<Watch> watches = new ArrayList<>();
  /** The clock of the pause after a failed opening, driven by the tests of {@link ClosingTlsServer}s. */
  private final AtomicLong clock = new AtomicLong();

  @AfterEach
  void stop() {
    watches.forEach(Watch::cancel);
  }

  @Test
  void manyWatchesOverTlsShareFewHttp2ConnectionsAndFixedThreads() {
    server = EmbeddedApiServer.builder().tls().build().start();
    KubernetesClient client = tlsClient();
    String threadPrefix = KubeClientFactory.THREAD_NAME_PREFIX + "1-http";
    Http2Streams streams = Http2Transport.streams(client.getHttpClient());
    try {
      createConfigMaps(client, WATCHES);
      openWatches(client.getHttpClient(), 0, 10);
      await().atMost(WAIT).until(() -> server.openWatches("configmaps") == 10);
      long threadsAtTen = threads(threadPrefix);

      openWatches(client.getHttpClient(), 10, WATCHES);
      await().atMost(WAIT).until(() -> server.openWatches("configmaps") == WATCHES);
      assertThat(watches).allSatisfy(w -> assertThat(w.response.join().code()).isEqualTo(200));
      int limit = EmbeddedApiServer.MAX_CONCURRENT_STREAMS;
      int connections = (WATCHES + limit - 1) / limit + 2;
      assertThat(server.openConnections()).isLessThanOrEqualTo(connections);
      assertThat(streams.sessions()).isLessThanOrEqualTo(connections);
      assertThat(streams.streams()).isEqualTo(WATCHES);
      assertThat(server.requestsByProtocol()).containsOnlyKeys("h2");
      assertThat(threads(threadPrefix)).isEqualTo(threadsAtTen).isLessThanOrEqualTo(Http2Transport.IO_THREADS + 1);

      // events reach the watches on every connection
      for (int i : new int[] {0, 120, WATCHES - 1}) {
        client.configMaps().inNamespace("default").withName("cm-" + i).edit(cm -> {
          cm.getData().put("key", "changed");
          return cm;
        });
      }
      for (int i : new int[] {0, 120, WATCHES - 1}) {
        await().atMost(WAIT).until(() -> watches.get(i).received().contains("\"MODIFIED\""));
      }

      // a cancelled watch ends at the server, and its stream leaves the client
      watches.subList(0, 50).forEach(Watch::cancel);
      await().atMost(Duration.ofSeconds(10)).until(() -> server.openWatches("configmaps") == WATCHES - 50);
      await().atMost(Duration.ofSeconds(10)).until(() -> streams.streams() == WATCHES - 50);

      // once every watch has ended, one session stays for the next ones and the others close
      watches.forEach(Watch::cancel);
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
        assertThat(server.openWatches("configmaps")).isZero();
        assertThat(streams.streams()).isZero();
        assertThat(streams.sessions()).as("sessions").isEqualTo(1);
        // that session and the connection of the writes above (requests that are not watches)
        assertThat(server.openConnections()).as("server connections").isEqualTo(2);
      });
    } finally {
      client.close();
    }
    await().atMost(WAIT).untilAsserted(() -> {
      assertThat(server.openConnections()).isZero();
      assertThat(threads(KubeClientFactory.THREAD_NAME_PREFIX + "1-")).isZero();
    });
    assertThat(streams.sessions()).isZero();
  }

  @Test
  void aWatchCancelledBeforeItsResponseEndsAtOnce() {
    server = EmbeddedApiServer.builder().tls().build().start();
    KubernetesClient client = tlsClient();
    HttpClient http = client.getHttpClient();
    Http2Streams streams = Http2Transport.streams(http);
    try {
      createConfigMaps(client, 3);

      // cancelled as it is sent: never reaches the server, and opens no connection
      Watch early = new Watch(true);
      early.send(http, watchUri(0));
      assertThat(early.response).failsWithin(WAIT).withThrowableOfType(Exception.class)
          .withRootCauseInstanceOf(CancellationException.class);

      // cancelled while its connection is being opened: dropped unsent
      Watch waiting = new Watch(false);
      waiting.send(http, watchUri(1));
      waiting.cancel();
      assertThat(waiting.response).failsWithin(WAIT).withThrowableOfType(Exception.class)
          .withRootCauseInstanceOf(CancellationException.class);

      Watch open = new Watch(false);
      watches.add(open);
      open.send(http, watchUri(2));
      assertThat(open.response.join().code()).isEqualTo(200);
      assertThat(server.requestCount(Verb.WATCH, "configmaps")).isEqualTo(1);
      // the two dropped unsent never started: their responses were never due. Jetty confirms a stream's start once
      // its HEADERS are written, which may come after the response was read on another thread
      await().atMost(WAIT).until(() -> open.started);
      assertThat(early.started || waiting.started).isFalse();

      // cancelled on an open connection before its response: the stream is reset, the server's watch ends
      for (int i = 0; i < 20; i++) {
        Watch inFlight = new Watch(false);
        inFlight.send(http, watchUri(0));
        inFlight.cancel();
      }
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
        assertThat(server.openWatches("configmaps", "metadata.name=cm-0")).isZero();
        assertThat(streams.streams()).isEqualTo(1);
      });
      assertThat(server.openWatches("configmaps", "metadata.name=cm-2")).isEqualTo(1);
    } finally {
      client.close();
    }
    await().atMost(WAIT).until(() -> server.openConnections() == 0);
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

  @Test
  void aConnectionLeftWithoutARequestClosesButAQuietWatchOutlivesTheIdleTimeout() throws Exception {
    server = EmbeddedApiServer.builder().build().start();
    KubernetesClient admin = new KubeClientFactory().create(
        KubeSettings.builder().masterUrl(server.url()).nodeName("node-a").build());
    long idleMillis = 500;
    try (HttpClient http = new Http2Transport("nodelet-idle-test-http", Optional.empty(),
        new Http2Transport.Timing(idleMillis, OPENING_TIMEOUT, System::nanoTime)).newBuilder().build()) {
      createConfigMaps(admin, 1);
      openWatches(http, 0, 1);
      await().atMost(WAIT).until(() -> server.openWatches("configmaps") == 1);
      int withWatch = server.openConnections(); // the watch's and the admin client's
      // over HTTP/1.1 the watch holds its connection: the get takes another one, idle once answered
      assertThat(http.sendAsync(http.newHttpRequestBuilder().uri(server.url()
          + "/api/v1/namespaces/default/configmaps/cm-0").build(), String.class).join().code()).isEqualTo(200);
      assertThat(server.openConnections()).isEqualTo(withWatch + 1);

      await().atMost(WAIT).until(() -> server.openConnections() == withWatch);
      // several idle timeouts later the quiet watch is still open, and still delivers: each idle timeout is seen as
      // another get's connection closing once it carried no request for that long
      for (int i = 0; i < 3; i++) {
        assertThat(http.sendAsync(http.newHttpRequestBuilder().uri(server.url()
            + "/api/v1/namespaces/default/configmaps/cm-0").build(), String.class).join().code()).isEqualTo(200);
        await().atMost(WAIT).until(() -> server.openConnections() == withWatch);
      }
      assertThat(server.openWatches("configmaps")).isEqualTo(1);
      admin.configMaps().inNamespace("default").withName("cm-0")
          .edit(c -> new ConfigMapBuilder(c).addToData("key", "after-idle").build());
      await().atMost(WAIT).until(() -> watches.get(0).received().contains("after-idle"));
    } finally {
      admin.close();
    }
  }

  @Test
  void aTlsServerWithoutHttp2GetsWatchesAndGetsOverHttp11AndOneLogLine() {
    server = EmbeddedApiServer.builder().tlsWithoutHttp2().build().start();
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    PrintStream original = System.err;
    System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
    KubernetesClient client = tlsClient();
    HttpClient http = client.getHttpClient();
    try {
      createConfigMaps(client, 3);
      // sent together, before the first HTTP/2 session failed: each is sent again over HTTP/1.1, none fails
      openWatches(http, 0, 3);
      for (Watch watch : watches) {
        assertThat(watch.response).succeedsWithin(WAIT).extracting(HttpResponse::code).isEqualTo(200);
      }
      // sent after: over HTTP/1.1 at once
      openWatches(http, 1, 2);
      await().atMost(WAIT).until(() -> server.openWatches("configmaps") == 4);
      client.configMaps().inNamespace("default").withName("cm-1").edit(c -> {
        c.getData().put("key", "changed");
        return c;
      });
      await().atMost(WAIT).until(() -> watches.get(1).received().contains("changed")
          && watches.get(3).received().contains("changed"));
      assertThat(client.configMaps().inNamespace("default").withName("cm-0").get().getData())
          .containsEntry("key", "value");
      assertThat(server.requestsByProtocol()).containsOnlyKeys("http/1.1");
      assertThat(Http2Transport.streams(http).sessions()).isZero();
    } finally {
      client.close();
      System.setErr(original);
    }
    await().atMost(WAIT).until(() -> server.openConnections() == 0);
    String text = log.toString(StandardCharsets.UTF_8);
    System.err.print(text);
    assertThat(text).containsOnlyOnce("offers no HTTP/2 (ALPN): its watches use HTTP/1.1");
  }

  @Test
  void theFirstRequestAfterTheServerWentAwayReopensTheSessionsThatItsLostStreamsNeed() {
    server = EmbeddedApiServer.builder().tls().build().start();
    KubernetesClient client = tlsClient();
    HttpClient http = client.getHttpClient();
    Http2Streams streams = Http2Transport.streams(http);
    try {
      openWatches(http, 0, WATCHES);
      await().atMost(WAIT).until(() -> server.openWatches("configmaps") == WATCHES);
      int sessions = (WATCHES + EmbeddedApiServer.MAX_CONCURRENT_STREAMS - 1) / EmbeddedApiServer.MAX_CONCURRENT_STREAMS;
      assertThat(streams.sessions()).isEqualTo(sessions);
      server.stop(); // GOAWAY, every watch ended, every connection closed
      await().atMost(WAIT).until(() -> streams.sessions() == 0 && streams.streams() == 0);
      server.start();

      // restarts come back a few at a time (the restart bucket): the first one waiting opens every session needed
      openWatches(http, 0, 1);
      assertThat(watches.get(WATCHES).response).succeedsWithin(WAIT).extracting(HttpResponse::code).isEqualTo(200);
      await().atMost(WAIT).untilAsserted(() -> assertThat(streams.sessions()).as("sessions").isEqualTo(sessions));
      openWatches(http, 1, WATCHES);
      await().atMost(WAIT).until(() -> server.openWatches("configmaps") == WATCHES);
      assertThat(streams.sessions()).isEqualTo(sessions);
      assertThat(streams.opening()).isZero();
    } finally {
      client.close();
    }
  }

  @Test
  void aServerThatClosesEveryNewConnectionIsConnectedToOnceForEachWaitingRequest() throws Exception {
    try (ClosingTlsServer tls = new ClosingTlsServer(); KubernetesClient client = clientOf(tls)) {
      HttpClient http = client.getHttpClient();
      Http2Streams streams = Http2Transport.streams(http);
      // each watch waits for a session that the server closes before its SETTINGS (a stopping API server)
      int failures = 10;
      for (int i = 0; i < failures; i++) {
        Watch watch = watchOn(http, tls);
        assertThat(watch.response).failsWithin(WAIT);
        // past the pause after a failed opening: the next watch opens a session again
        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(300));
      }
      await().atMost(WAIT).untilAsserted(() -> assertThat(streams.opening()).as("sessions being opened").isZero());
      assertThat(tls.accepted()).isEqualTo(failures);

      // each of those openings ended once: the next request opens one session, not one per earlier failure
      tls.hold();
      Watch watch = watchOn(http, tls);
      assertThat(streams.opening()).isEqualTo(1);
      await().atMost(WAIT).until(() -> tls.accepted() == failures + 1);
      // until the opening's deadline ends it, nothing else is connected for that request
      assertThat(watch.response).failsWithin(WAIT).withThrowableThat()
          .withMessageContaining("no HTTP/2 SETTINGS from the server within");
      assertThat(tls.accepted()).as("connections opened for one waiting request").isEqualTo(failures + 1);
    }
  }

  @Test
  void anOpeningThatTheServerNeverAnswersFailsAtItsDeadline() throws Exception {
    try (ClosingTlsServer tls = new ClosingTlsServer(); KubernetesClient client = clientOf(tls)) {
      tls.hold(); // accepted, never a handshake: nothing else would end the opening
      HttpClient http = client.getHttpClient();
      Http2Streams streams = Http2Transport.streams(http);
      Watch watch = watchOn(http, tls);
      assertThat(watch.response).failsWithin(OPENING_TIMEOUT.plusSeconds(20))
          .withThrowableThat().withMessageContaining("no HTTP/2 SETTINGS from the server within");
      assertThat(streams.opening()).isZero();
    }
  }

  @Test
  void requestsToAServerThatCannotBeConnectedToFailWithoutAConnectionEach() throws Exception {
    try (ClosingTlsServer tls = new ClosingTlsServer(); KubernetesClient client = clientOf(tls)) {
      HttpClient http = client.getHttpClient();
      // restarts against a stopping server, one every 10 ms for a second, each once the one before has its answer
      int count = 100;
      for (int i = 0; i < count; i++) {
        Watch watch = watchOn(http, tls);
        assertThat(watch.response).failsWithin(WAIT);
        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(10));
      }
      for (Watch watch : watches) {
        assertThat(watch.response).failsWithin(WAIT).withThrowableThat().withMessageContaining("cannot connect");
      }
      // after a failed opening the pool waits 50 ms, doubling up to 250 ms, before the next one
      assertThat(tls.accepted()).as("connections for %d requests over 1 s", count).isBetween(2, 15);
    }
  }

  private KubernetesClient clientOf(ClosingTlsServer tls) throws IOException {
    return new KubeClientFactory(new Http2Transport.Timing(Http2Transport.IDLE_CONNECTION_MILLIS, OPENING_TIMEOUT,
        clock::get)).create(KubeSettings.builder()
        .kubeconfig(tls.writeKubeconfig(dir.resolve("kubeconfig")).toString()).nodeName("node-a").http2(true)
        .build());
  }

  /** A watch of the collection on {@code tls}, sent. */
  private Watch watchOn(HttpClient http, ClosingTlsServer tls) {
    Watch watch = new Watch(false);
    watches.add(watch);
    watch.send(http, tls.url() + "/api/v1/namespaces/default/configmaps?watch=true");
    return watch;
  }

  private KubernetesClient tlsClient() {
    return new KubeClientFactory().create(KubeSettings.builder()
        .kubeconfig(server.writeKubeconfig(dir.resolve("kubeconfig")).toString()).nodeName("node-a").http2(true)
        .build());
  }

  /** Written by the client under test: the server's connection count is then that client's alone. */
  private static void createConfigMaps(KubernetesClient client, int count) {
    IntStream.range(0, count).forEach(i -> client.configMaps().inNamespace("default").resource(
        new ConfigMapBuilder().withNewMetadata().withName("cm-" + i).endMetadata().withData(Map.of("key", "value"))
            .build()).create());
  }

  private String watchUri(int i) {
    return server.url() + "/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true"
        + "&fieldSelector=metadata.name%3Dcm-" + i;
  }

  /** Watches as the reflector opens them: one streaming GET per object, its bytes consumed as they come. */
  private void openWatches(HttpClient http, int from, int to) {
    for (int i = from; i < to; i++) {
      Watch watch = new Watch(false);
      watches.add(watch);
      watch.send(http, watchUri(i));
    }
  }

  private static long threads(String prefix) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
  }

  /**
   * A TLS server (the embedded server's kind of certificates, ALPN {@code h2}) that completes each handshake and
   * closes the connection at once, as a stopping API server does with new connections; or, once {@link #hold()}
   * is called, accepts connections and leaves them unanswered.
   */
  private static final class ClosingTlsServer implements AutoCloseable {
    private final ServingCertificates certificates = ServingCertificates.issue(InetAddress.getLoopbackAddress());
    private final SSLServerSocket socket;
    private final Thread acceptor;
    private final AtomicInteger accepted = new AtomicInteger();
    private final List<Socket> held = new CopyOnWriteArrayList<>();
    private volatile boolean hold;

    ClosingTlsServer() throws Exception {
      KeyStore keys = KeyStore.getInstance("PKCS12");
      char[] password = certificates.storePassword().toCharArray();
      keys.load(new ByteArrayInputStream(certificates.servingKeyStore()), password);
      KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keyManagers.init(keys, password);
      SSLContext tls = SSLContext.getInstance("TLS");
      tls.init(keyManagers.getKeyManagers(), null, null);
      socket = (SSLServerSocket) tls.getServerSocketFactory().createServerSocket(0, 50,
          InetAddress.getLoopbackAddress());
      acceptor = new Thread(this::accept, "closing-tls-server");
      acceptor.start();
    }

    private void accept() {
      while (!socket.isClosed()) {
        try {
          SSLSocket client = (SSLSocket) socket.accept();
          accepted.incrementAndGet();
          if (hold) {
            held.add(client);
            continue;
          }
          SSLParameters parameters = client.getSSLParameters();
          parameters.setApplicationProtocols(new String[] {"h2"});
          client.setSSLParameters(parameters);
          try (client) {
            client.startHandshake();
          }
        } catch (IOException e) {
          // closed, or a handshake the client gave up
        }
      }
    }

    String url() {
      return "https://127.0.0.1:" + socket.getLocalPort();
    }

    int accepted() {
      return accepted.get();
    }

    void hold() {
      hold = true;
    }

    Path writeKubeconfig(Path file) throws IOException {
      String ca = Base64.getEncoder().encodeToString(certificates.caPem().getBytes(StandardCharsets.US_ASCII));
      return Files.writeString(file, String.join("\n", "apiVersion: v1", "kind: Config", "clusters:",
          "- name: closing", "  cluster:", "    server: " + url(), "    certificate-authority-data: " + ca,
          "users:", "- name: closing", "  user: {token: \"t\"}", "contexts:", "- name: closing", "  context:",
          "    cluster: closing", "    user: closing", "current-context: closing", ""));
    }

    @Override
    public void close() throws Exception {
      socket.close();
      acceptor.join(10_000);
      for (Socket s : held) {
        s.close();
      }
    }
  }

  /** One watch: what it received, and its body as soon as the transport sent it. */
  private static final class Watch implements AsyncBody.Consumer<List<ByteBuffer>>, EarlyBody {
    private final boolean cancelWhenSent;
    private final StringBuffer received = new StringBuffer();
    private volatile AsyncBody body;
    /** Whether its stream opened: the moment its response is due. */
    volatile boolean started;
    CompletableFuture<HttpResponse<AsyncBody>> response;

    Watch(boolean cancelWhenSent) {
      this.cancelWhenSent = cancelWhenSent;
    }

    void send(HttpClient http, String uri) {
      response = http.consumeBytes(http.newHttpRequestBuilder().uri(uri).forStreaming().build(), this)
          .thenApply(answer -> {
            answer.body().consume();
            return answer;
          });
    }

    @Override
    public void sent(AsyncBody sentBody) {
      body = sentBody;
      if (cancelWhenSent) {
        sentBody.cancel();
      }
    }

    @Override
    public void started() {
      started = true;
    }

    @Override
    public void consume(List<ByteBuffer> buffers, AsyncBody asyncBody) {
      buffers.forEach(b -> received.append(StandardCharsets.UTF_8.decode(b)));
      asyncBody.consume();
    }

    String received() {
      return received.toString();
    }

    void cancel() {
      AsyncBody b = body;
      if (b != null) {
        b.cancel();
      }
    }
  }
}
