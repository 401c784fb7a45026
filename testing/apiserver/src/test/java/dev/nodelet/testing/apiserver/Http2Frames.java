package dev.nodelet.testing.apiserver;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One HTTP/2 connection spoken frame by frame, for tests that look at the wire: every HTTP/2 library keeps its
 * client within the rules these tests check. A reader thread collects what the server sends.
 */
final class Http2Frames implements AutoCloseable {

  static final int DATA = 0x0;
  static final int HEADERS = 0x1;
  static final int RST_STREAM = 0x3;
  static final int SETTINGS = 0x4;
  static final int PING = 0x6;
  static final int GOAWAY = 0x7;
  static final int END_STREAM = 0x1;
  static final int END_HEADERS = 0x4;
  static final int ACK = 0x1;
  static final int SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
  static final int REFUSED_STREAM = 0x7;
  static final int CANCEL = 0x8;

  final Map<Integer, Long> serverSettings = new LinkedHashMap<>();
  final Set<Integer> answered = ConcurrentHashMap.newKeySet(); // streams that got response headers
  final Map<Integer, Integer> reset = new ConcurrentHashMap<>(); // stream -> RST_STREAM error code
  final AtomicInteger goAway = new AtomicInteger(-1); // the last stream of a GOAWAY, -1 before one
  final Set<Integer> ended = ConcurrentHashMap.newKeySet(); // streams the server ended (END_STREAM)
  /** What the server did, in order: "GOAWAY", "END <stream>", "CLOSED" (the connection). */
  final List<String> events = new CopyOnWriteArrayList<>();
  private final Socket socket;
  private final String scheme;
  private final OutputStream out;
  private final DataInputStream in;
  private final Thread reader;

  Http2Frames(Socket socket, String scheme) throws IOException {
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
        if ((header[1] == HEADERS || header[1] == DATA) && (header[2] & END_STREAM) != 0) {
          ended.add(header[3]);
          events.add("END " + header[3]);
        }
        switch (header[1]) {
          case HEADERS -> answered.add(header[3]);
          case RST_STREAM -> reset.put(header[3], ByteBuffer.wrap(payload).getInt());
          case GOAWAY -> {
            goAway.set(ByteBuffer.wrap(payload).getInt() & 0x7fffffff);
            events.add("GOAWAY");
          }
          case PING -> {
            if ((header[2] & ACK) == 0) {
              frame(PING, ACK, 0, payload);
            }
          }
          default -> {
            // DATA (watch events), WINDOW_UPDATE, SETTINGS acknowledgements: not what these tests look at
          }
        }
      }
    } catch (IOException e) {
      events.add("CLOSED"); // by the server, or by the test that is over
    }
  }

  @Override
  public void close() throws Exception {
    socket.close();
    reader.join(5_000);
  }
}
