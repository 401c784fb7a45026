package dev.nodelet.testing.apiserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
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

  private static final int HEADERS = 0x1;
  private static final int RST_STREAM = 0x3;
  private static final int SETTINGS = 0x4;
  private static final int PING = 0x6;
  private static final int GOAWAY = 0x7;
  private static final int END_STREAM = 0x1;
  private static final int END_HEADERS = 0x4;
  private static final int ACK = 0x1;
  private static final int SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
  private static final int REFUSED_STREAM = 0x7;
  private static final int CANCEL = 0x8;

  @AutoClose // after the test's @AfterEach methods
  private EmbeddedApiServer server;

  @Test
  void the101stConcurrentWatchOnOneTlsConnectionIsRefused() throws Exception {
    server = EmbeddedApiServer.builder().tls().build().start();
    SSLSocket socket = (SSLSocket) ApiServerTlsTest.trusting(server).getSocketFactory()
        .createSocket("127.0.0.1", server.port());
    SSLParameters parameters = socket.getSSLParameters();
    parameters.setApplicationProtocols(new String[] {"h2"});
    parameters.setEndpointIdentificationAlgorithm("HTTPS");
    socket.setSSLParameters(parameters);
    socket.startHandshake();
    assertThat(socket.getApplicationProtocol()).isEqualTo("h2");
    try (Connection connection = new Connection(socket, "https")) {
      exceedTheLimit(connection);
    }
  }

  @Test
  void theLimitHoldsForHttp2CleartextToo() throws Exception {
    server = EmbeddedApiServer.builder().build().start();
    Socket socket = new Socket();
    socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
    try (Connection connection = new Connection(socket, "http")) { // prior knowledge: the preface, no upgrade
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
    SSLSocket socket = (SSLSocket) ApiServerTlsTest.trusting(server).getSocketFactory()
        .createSocket("127.0.0.1", server.port());
    SSLParameters parameters = socket.getSSLParameters();
    parameters.setApplicationProtocols(new String[] {"h2"});
    socket.setSSLParameters(parameters);
    socket.startHandshake();
    socket.setTcpNoDelay(true); // a frame is two writes: no delayed-ACK wait on each round trip
    try (Connection connection = new Connection(socket, "https")) {
      int cancels = 400; // twice what Netty allows by default in 30 s
      for (int i = 0; i < cancels; i++) {
        int stream = 1 + 2 * i;
        connection.watch(stream, "cm-" + (i % 10));
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(1))
            .until(() -> connection.answered.contains(stream) || connection.goAway.get() >= 0);
        assertThat(connection.goAway.get()).as("GOAWAY after %d cancelled watches", i).isEqualTo(-1);
        connection.reset(stream, CANCEL);
      }
      int last = 1 + 2 * cancels;
      connection.watch(last, "cm-last");
      await().atMost(Duration.ofSeconds(10)).until(() -> connection.answered.contains(last));
      assertThat(connection.goAway.get()).isEqualTo(-1);
      assertThat(server.openConnections()).isEqualTo(1);
    }
  }

  private static void close(InputStream body) {
    try {
      body.close();
    } catch (IOException e) {
      // the server is going away anyway
    }
  }

  private void exceedTheLimit(Connection connection) throws Exception {
    assertThat(connection.serverSettings).containsEntry(SETTINGS_MAX_CONCURRENT_STREAMS,
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
    assertThat(connection.reset).containsExactly(Map.entry(extra, REFUSED_STREAM));
    assertThat(connection.answered).doesNotContain(extra);
    assertThat(server.openWatches("configmaps")).isEqualTo(limit);
    assertThat(server.openConnections()).isEqualTo(1);

    // the connection stays usable: once a watch ends, its slot takes the next stream
    connection.reset(1, CANCEL);
    await().atMost(Duration.ofSeconds(10)).until(() -> server.openWatches("configmaps") == limit - 1);
    int next = extra + 2;
    connection.watch(next, "cm-next");
    await().atMost(Duration.ofSeconds(10)).until(() -> connection.answered.contains(next));
    assertThat(server.openWatches("configmaps")).isEqualTo(limit);
    assertThat(connection.goAway.get()).isEqualTo(-1);
    assertThat(server.requestsByProtocol()).containsOnlyKeys("h2");
  }

  /** One HTTP/2 connection spoken frame by frame; a reader thread collects what the server sends. */
  private static final class Connection implements AutoCloseable {
    final Map<Integer, Long> serverSettings = new LinkedHashMap<>();
    final Set<Integer> answered = ConcurrentHashMap.newKeySet(); // streams that got response headers
    final Map<Integer, Integer> reset = new ConcurrentHashMap<>(); // stream -> RST_STREAM error code
    final AtomicInteger goAway = new AtomicInteger(-1);
    private final Socket socket;
    private final String scheme;
    private final OutputStream out;
    private final DataInputStream in;
    private final Thread reader;

    Connection(Socket socket, String scheme) throws IOException {
      this.socket = socket;
      this.scheme = scheme;
      this.out = socket.getOutputStream();
      this.in = new DataInputStream(socket.getInputStream());
      out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      frame(SETTINGS, 0, 0, new byte[0]);
      // the server's settings come first; acknowledging them is what makes the server apply its own
      int[] header = readFrameHeader();
      assertThat(header[1]).as("first frame type").isEqualTo(SETTINGS);
      ByteBuffer payload = ByteBuffer.wrap(in.readNBytes(header[0]));
      while (payload.remaining() >= 6) {
        serverSettings.put(payload.getShort() & 0xffff, payload.getInt() & 0xffffffffL);
      }
      frame(SETTINGS, ACK, 0, new byte[0]);
      reader = new Thread(this::read, "http2-frame-reader");
      reader.setDaemon(true);
      reader.start();
    }

    void watch(int stream, String name) throws IOException {
      ByteArrayOutputStream block = new ByteArrayOutputStream();
      literal(block, ":method", "GET");
      literal(block, ":scheme", scheme);
      literal(block, ":authority", "127.0.0.1");
      literal(block, ":path", "/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=metadata.name%3D"
          + name);
      frame(HEADERS, END_HEADERS | END_STREAM, stream, block.toByteArray());
    }

    void reset(int stream, int errorCode) throws IOException {
      frame(RST_STREAM, 0, stream, ByteBuffer.allocate(4).putInt(errorCode).array());
    }

    /** HPACK "literal header field without indexing, new name", no Huffman coding (RFC 7541 §6.2.2). */
    private static void literal(ByteArrayOutputStream block, String name, String value) {
      block.write(0);
      string(block, name);
      string(block, value);
    }

    private static void string(ByteArrayOutputStream block, String s) {
      byte[] bytes = s.getBytes(StandardCharsets.US_ASCII);
      int length = bytes.length;
      if (length < 127) {
        block.write(length);
      } else { // a 7-bit prefix integer (RFC 7541 §5.1)
        block.write(127);
        length -= 127;
        while (length >= 128) {
          block.write((length & 0x7f) | 0x80);
          length >>= 7;
        }
        block.write(length);
      }
      block.writeBytes(bytes);
    }

    private synchronized void frame(int type, int flags, int stream, byte[] payload) throws IOException {
      ByteBuffer header = ByteBuffer.allocate(9);
      header.put((byte) (payload.length >>> 16)).put((byte) (payload.length >>> 8)).put((byte) payload.length);
      header.put((byte) type).put((byte) flags).putInt(stream);
      out.write(header.array());
      out.write(payload);
      out.flush();
    }

    private int[] readFrameHeader() throws IOException {
      byte[] header = in.readNBytes(9);
      if (header.length < 9) {
        throw new IOException("the server closed the connection");
      }
      int length = ((header[0] & 0xff) << 16) | ((header[1] & 0xff) << 8) | (header[2] & 0xff);
      int stream = ByteBuffer.wrap(header, 5, 4).getInt() & 0x7fffffff;
      return new int[] {length, header[3] & 0xff, header[4] & 0xff, stream};
    }

    private void read() {
      try {
        while (true) {
          int[] header = readFrameHeader();
          byte[] payload = in.readNBytes(header[0]);
          switch (header[1]) {
            case HEADERS -> answered.add(header[3]);
            case RST_STREAM -> reset.put(header[3], ByteBuffer.wrap(payload).getInt());
            case GOAWAY -> goAway.set(ByteBuffer.wrap(payload, 4, 4).getInt());
            case PING -> {
              if ((header[2] & ACK) == 0) {
                frame(PING, ACK, 0, payload);
              }
            }
            default -> {
              // DATA (watch events), WINDOW_UPDATE, SETTINGS acknowledgements: not what this test looks at
            }
          }
        }
      } catch (IOException e) {
        // the socket was closed: the test is over
      }
    }

    @Override
    public void close() throws Exception {
      socket.close();
      reader.join(5_000);
    }
  }
}
