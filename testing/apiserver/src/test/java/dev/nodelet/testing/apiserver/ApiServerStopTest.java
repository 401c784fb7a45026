package dev.nodelet.testing.apiserver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/**
 * A stop in a kube-apiserver's order, seen on the wire: new requests are refused first (GOAWAY on HTTP/2, 503 on
 * HTTP/1.1, a new connection closed), the open watches go on until they are ended, and only then does the server
 * stop listening. A client can tell a server that is going away from one that broke.
 */
class ApiServerStopTest {

  private static final Duration WAIT = Duration.ofSeconds(30);

  @AutoClose // after the test's @AfterEach methods
  private EmbeddedApiServer server;

  @Test
  void aServerThatRefusesNewRequestsLetsItsOpenWatchesGoOn() throws Exception {
    server = EmbeddedApiServer.builder().build().start(); // plain HTTP: HTTP/1.1, and HTTP/2 by prior knowledge
    try (Http2Frames h2 = new Http2Frames(connect(), "http"); Socket http11 = connect()) {
      h2.watch(1, "cm-0");
      await().atMost(WAIT).until(() -> h2.answered.contains(1) && server.openWatches("configmaps") == 1);
      assertThat(get(http11, "/version")).startsWith("HTTP/1.1 200");

      server.refuseNewRequests();
      await().atMost(WAIT).until(() -> h2.goAway.get() == 1); // the last stream it will process: the watch's
      assertThat(server.openWatches("configmaps")).isEqualTo(1);
      assertThat(h2.ended).isEmpty();
      // an open HTTP/1.1 connection: its next request is answered 503
      assertThat(get(http11, "/api/v1/namespaces/default/configmaps")).startsWith("HTTP/1.1 503");
      // a new connection is closed without an answer
      try (Socket late = connect()) {
        assertThat(answer(late, "/version")).isEmpty();
      }
      assertThat(server.openWatches("configmaps")).isEqualTo(1);
      assertThat(h2.ended).isEmpty();

      server.stop();
      await().atMost(WAIT).until(() -> h2.events.contains("CLOSED"));
      assertThat(h2.events).containsExactly("GOAWAY", "END 1", "CLOSED");
    }
  }

  @Test
  void aStopSendsGoAwayThenEndsTheWatchesThenClosesTheConnections() throws Exception {
    server = EmbeddedApiServer.builder().build().start();
    try (Http2Frames h2 = new Http2Frames(connect(), "http")) {
      h2.watch(1, "cm-0");
      h2.watch(3, "cm-1");
      await().atMost(WAIT).until(() -> h2.answered.size() == 2 && server.openWatches("configmaps") == 2);

      server.stop();
      await().atMost(WAIT).until(() -> h2.events.contains("CLOSED"));
      assertThat(h2.events).containsExactlyInAnyOrder("GOAWAY", "END 1", "END 3", "CLOSED");
      assertThat(h2.events.get(0)).isEqualTo("GOAWAY");
      assertThat(h2.events.get(3)).isEqualTo("CLOSED");
      assertThat(h2.goAway.get()).isEqualTo(3);
    }
    server.start();
    assertThat(server.openWatches("configmaps")).isZero();
    try (Socket again = connect()) {
      assertThat(get(again, "/version")).startsWith("HTTP/1.1 200");
    }
  }

  private Socket connect() throws IOException {
    Socket socket = new Socket();
    socket.connect(new InetSocketAddress("127.0.0.1", server.port()), 5_000);
    socket.setSoTimeout(10_000);
    return socket;
  }

  /** Sends a GET on an open HTTP/1.1 connection and returns the response's head and body. */
  private static String get(Socket socket, String path) throws IOException {
    String answer = answer(socket, path);
    assertThat(answer).as("the answer to GET %s", path).isNotEmpty();
    return answer;
  }

  /** The response to a GET, read up to its body's declared length; empty if the server closed without one. */
  private static String answer(Socket socket, String path) throws IOException {
    socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII));
    socket.getOutputStream().flush();
    InputStream in = socket.getInputStream();
    ByteArrayOutputStream read = new ByteArrayOutputStream();
    int contentLength = -1;
    int headEnd = -1;
    try {
      for (int b; (b = in.read()) != -1; ) {
        read.write(b);
        String text = read.toString(StandardCharsets.US_ASCII);
        if (headEnd < 0 && text.endsWith("\r\n\r\n")) {
          headEnd = text.length();
          for (String line : text.split("\r\n")) {
            if (line.toLowerCase().startsWith("content-length:")) {
              contentLength = Integer.parseInt(line.substring("content-length:".length()).trim());
            }
          }
        }
        if (headEnd >= 0 && text.length() >= headEnd + Math.max(0, contentLength)) {
          break;
        }
      }
    } catch (IOException e) {
      // reset by the server: what was read is the answer
    }
    return read.toString(StandardCharsets.US_ASCII);
  }
}
