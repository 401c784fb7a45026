package dev.nodelet.testing.apiserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * The HTTP/2 stream limit, seen on the wire: a client that ignores the server's {@code SETTINGS_MAX_CONCURRENT_STREAMS}
 * opens 101 watches on one connection and the server refuses the 101st with {@code RST_STREAM(REFUSED_STREAM)}
 * (RFC 9113 §5.1.2), as a kube-apiserver does. Ordinary clients never get there: they queue, open another
 * connection, or (the JDK's client) fail the request themselves. The frames are written by hand because every HTTP/2
 * library keeps its client within the limit.
 */
class Http2StreamLimitTest {

  @AutoClose // after the test's @AfterEach methods
  private EmbeddedApiServer server;

  @Test
  void the101stConcurrentWatchOnOneTlsConnectionIsRefused() throws Exception {
    server = EmbeddedApiServer.builder().tls().build().start();
    try (Http2Frames connection = new Http2Frames(h2OverTls(), "https")) {
      exceedTheLimit(connection);
    }
  }

  @Test
  void theLimitHoldsForHttp2CleartextToo() throws Exception {
    server = EmbeddedApiServer.builder().build().start();
    Socket socket = new Socket();
    socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
    try (Http2Frames connection = new Http2Frames(socket, "http")) { // prior knowledge: the preface, no upgrade
      exceedTheLimit(connection);
    }
  }

  @Test
  void theJdkHttpClientKeepsToTheLimitAndFailsTheStreamBeyondIt() throws Exception {
    // the transport of fabric8's JDK HTTP client: one connection per server, whatever the number of streams
    server = EmbeddedApiServer.builder().tls().build().start();
    HttpClient client = HttpClient.newBuilder().sslContext(ApiServerTlsTest.trusting(server)).build();
    int limit = EmbeddedApiServer.MAX_CONCURRENT_STREAMS;
    List<CompletableFuture<HttpResponse<InputStream>>> watches = new ArrayList<>();
    // one request first, as a client's discovery: requests sent before its connection exists each open their own
    assertThat(client.send(HttpRequest.newBuilder(URI.create(server.url() + "/version")).build(),
        HttpResponse.BodyHandlers.ofString()).version()).isEqualTo(HttpClient.Version.HTTP_2);
    try {
      for (int i = 0; i <= limit; i++) {
        watches.add(client.sendAsync(HttpRequest.newBuilder(URI.create(server.url()
                + "/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3Dcm-" + i)).build(),
            HttpResponse.BodyHandlers.ofInputStream()));
      }
      await().atMost(Duration.ofSeconds(60)).until(() -> server.openWatches("configmaps") == limit
          && watches.stream().filter(CompletableFuture::isCompletedExceptionally).count() == 1);
      CompletableFuture<HttpResponse<InputStream>> refused = watches.stream()
          .filter(CompletableFuture::isCompletedExceptionally).findFirst().orElseThrow();
      assertThatThrownBy(refused::join).hasRootCauseInstanceOf(IOException.class)
          .hasRootCauseMessage("too many concurrent streams");
      assertThat(server.openConnections()).isEqualTo(1);
      assertThat(server.requestsByProtocol()).containsExactly(Map.entry("h2", limit + 1L));
    } finally {
      watches.forEach(w -> w.thenAccept(response -> close(response.body())));
    }
  }

  @Test
  void aClientThatCancelsHundredsOfWatchesKeepsItsConnection() throws Exception {
    // a kubelet cancels the watches of every pod that leaves; a kube-apiserver does not count its resets
    server = EmbeddedApiServer.builder().tls().build().start();
    SSLSocket socket = h2OverTls();
    socket.setTcpNoDelay(true); // a frame is two writes: no delayed-ACK wait on each round trip
    try (Http2Frames connection = new Http2Frames(socket, "https")) {
      int cancels = 400; // twice what Netty allows by default in 30 s
      for (int i = 0; i < cancels; i++) {
        int stream = 1 + 2 * i;
        connection.watch(stream, "cm-" + (i % 10));
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(1))
            .until(() -> connection.answered.contains(stream) || connection.goAway.get() >= 0);
        assertThat(connection.goAway.get()).as("GOAWAY after %d cancelled watches", i).isEqualTo(-1);
        connection.reset(stream, Http2Frames.CANCEL);
      }
      int last = 1 + 2 * cancels;
      connection.watch(last, "cm-last");
      await().atMost(Duration.ofSeconds(10)).until(() -> connection.answered.contains(last));
      assertThat(connection.goAway.get()).isEqualTo(-1);
      assertThat(server.openConnections()).isEqualTo(1);
    }
  }

  /** A TLS connection to the server that negotiated HTTP/2 by ALPN. */
  private SSLSocket h2OverTls() throws Exception {
    SSLSocket socket = (SSLSocket) ApiServerTlsTest.trusting(server).getSocketFactory()
        .createSocket("127.0.0.1", server.port());
    SSLParameters parameters = socket.getSSLParameters();
    parameters.setApplicationProtocols(new String[] {"h2"});
    parameters.setEndpointIdentificationAlgorithm("HTTPS");
    socket.setSSLParameters(parameters);
    socket.startHandshake();
    assertThat(socket.getApplicationProtocol()).isEqualTo("h2");
    return socket;
  }

  private static void close(InputStream body) {
    try {
      body.close();
    } catch (IOException e) {
      // the server is going away anyway
    }
  }

  private void exceedTheLimit(Http2Frames connection) throws Exception {
    assertThat(connection.serverSettings).containsEntry(Http2Frames.SETTINGS_MAX_CONCURRENT_STREAMS,
        (long) EmbeddedApiServer.MAX_CONCURRENT_STREAMS);
    int limit = EmbeddedApiServer.MAX_CONCURRENT_STREAMS;
    // streams 1, 3, ... 199: one watch each on its own ConfigMap, all open at once
    for (int i = 0; i < limit; i++) {
      connection.watch(1 + 2 * i, "cm-" + i);
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> server.openWatches("configmaps") == limit
        && connection.answered.size() == limit);

    int extra = 1 + 2 * limit;
    connection.watch(extra, "cm-extra");
    await().atMost(Duration.ofSeconds(10)).until(() -> connection.reset.containsKey(extra));
    assertThat(connection.reset).containsExactly(Map.entry(extra, Http2Frames.REFUSED_STREAM));
    assertThat(connection.answered).doesNotContain(extra);
    assertThat(server.openWatches("configmaps")).isEqualTo(limit);
    assertThat(server.openConnections()).isEqualTo(1);

    // the connection stays usable: once a watch ends, its slot takes the next stream
    connection.reset(1, Http2Frames.CANCEL);
    await().atMost(Duration.ofSeconds(10)).until(() -> server.openWatches("configmaps") == limit - 1);
    int next = extra + 2;
    connection.watch(next, "cm-next");
    await().atMost(Duration.ofSeconds(10)).until(() -> connection.answered.contains(next));
    assertThat(server.openWatches("configmaps")).isEqualTo(limit);
    assertThat(connection.goAway.get()).isEqualTo(-1);
    assertThat(server.requestsByProtocol()).containsOnlyKeys("h2");
  }
}
