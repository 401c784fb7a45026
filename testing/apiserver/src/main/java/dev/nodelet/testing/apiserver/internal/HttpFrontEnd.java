package dev.nodelet.testing.apiserver.internal;

import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.vertx.HttpServerRequestHandler;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.file.FileSystemOptions;
import io.vertx.core.http.Http2Settings;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.PfxOptions;
import java.net.InetAddress;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * The HTTP side: a Vert.x server (the mock server's own HTTP stack) whose requests go through the mock server's
 * request handler and WebSocket upgrade, plus the one thing that handler cannot do, streaming a watch over plain
 * HTTP. The mock server's {@code MockWebServer} binds once and cannot rebind, hence this class to restart on the
 * same port.
 *
 * <p>With certificates it serves HTTPS only, HTTP/2 or HTTP/1.1 as ALPN decides; without, plain HTTP/1.1 and
 * HTTP/2 cleartext (prior knowledge or {@code Upgrade: h2c}). Either way an HTTP/2 connection carries at most
 * {@link #MAX_CONCURRENT_STREAMS} streams at once, as a kube-apiserver's does: Netty answers a stream beyond it with
 * {@code RST_STREAM(REFUSED_STREAM)}.
 */
public final class HttpFrontEnd {

  /** The kube-apiserver's {@code SETTINGS_MAX_CONCURRENT_STREAMS} (its {@code --http2-max-streams-per-connection}). */
  public static final int MAX_CONCURRENT_STREAMS = 100;

  private final ApiServerDispatcher dispatcher;
  private final InetAddress address;
  private final ServingCertificates certificates; // null: plain HTTP
  private final boolean http2;
  // one entry per TCP connection, keyed by the client's address: an h2c upgrade replaces the HTTP/1.1 connection
  // object of the same socket
  private final Map<String, HttpConnection> connections = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> requestsByProtocol = new ConcurrentHashMap<>();
  private int port;
  private Vertx vertx;
  private HttpServer server;
  private volatile boolean stopping;

  public HttpFrontEnd(ApiServerDispatcher dispatcher, InetAddress address, int port,
      ServingCertificates certificates, boolean http2) {
    this.dispatcher = dispatcher;
    this.address = address;
    this.port = port;
    this.certificates = certificates;
    this.http2 = http2;
  }

  public synchronized void start() {
    if (server != null) {
      return;
    }
    vertx = Vertx.vertx(new VertxOptions()
        .setEventLoopPoolSize(2)
        .setWorkerPoolSize(1)
        .setFileSystemOptions(new FileSystemOptions().setFileCachingEnabled(false)
            .setClassPathResolvingEnabled(false)));
    HttpServerRequestHandler mock = new HttpServerRequestHandler(vertx) {
      @Override
      protected MockResponse onHttpRequest(RecordedRequest request) {
        return dispatcher.dispatch(request);
      }
    };
    HttpServerOptions options = new HttpServerOptions()
        .setHost(address.getHostAddress())
        .setPort(port)
        .setHandle100ContinueAutomatically(true)
        .setHttp2ClearTextEnabled(true)
        .setInitialSettings(new Http2Settings().setMaxConcurrentStreams(MAX_CONCURRENT_STREAMS))
        // a kube-apiserver keeps a connection whatever number of streams its client cancels (Go bounds the running
        // handlers instead: the stream limit); Netty's default closes it after 200 in 30 s, which a kubelet that
        // cancels the watches of departing pods reaches
        .setHttp2RstFloodMaxRstFramePerWindow(0);
    if (certificates != null) {
      options.setSsl(true)
          .setUseAlpn(true)
          .setAlpnVersions(http2 ? List.of(HttpVersion.HTTP_2, HttpVersion.HTTP_1_1)
              : List.of(HttpVersion.HTTP_1_1))
          .setKeyCertOptions(new PfxOptions()
              .setValue(io.vertx.core.buffer.Buffer.buffer(certificates.servingKeyStore()))
              .setPassword(certificates.storePassword()));
    }
    HttpServer s = vertx.createHttpServer(options);
    s.connectionHandler(connection -> {
      if (stopping) {
        connection.close();
        return;
      }
      String client = connection.remoteAddress().toString();
      connections.put(client, connection);
      connection.closeHandler(v -> connections.remove(client, connection));
    });
    s.requestHandler(request -> {
      if (stopping) {
        request.response().setStatusCode(503).putHeader("Content-Type", "application/json")
            .end(Status.json(503, "the API server is shutting down"));
        return;
      }
      requestsByProtocol.computeIfAbsent(request.version().alpnName(), k -> new LongAdder()).increment();
      if (request.version() == HttpVersion.HTTP_2 && request.getHeader("Host") == null && request.host() != null) {
        request.headers().set("Host", request.host()); // HTTP/2 sends :authority instead; discovery answers with it
      }
      if (request.getHeader("Content-Type") == null && (request.method() == io.vertx.core.http.HttpMethod.POST
          || request.method() == io.vertx.core.http.HttpMethod.PUT
          || request.method() == io.vertx.core.http.HttpMethod.DELETE)) {
        // the API server reads a body without a type as JSON, its first media type; the mock's handler reads no
        // body that has neither a type nor a length (a chunked one: kubectl create --raw -f FILE)
        request.headers().set("Content-Type", "application/json");
      }
      if (isPlainHttpWatch(request)) {
        streamWatch(request);
      } else if (FollowedLogs.isFollow(request)) {
        FollowedLogs.stream(request, dispatcher);
      } else {
        mock.handle(request);
      }
    });
    try {
      server = await(s.listen());
    } catch (RuntimeException e) {
      await(vertx.close());
      vertx = null;
      throw new IllegalStateException("cannot listen on " + address.getHostAddress() + ":" + port, e);
    }
    port = server.actualPort();
  }

  /**
   * The first step of stopping, as a kube-apiserver that shuts down: GOAWAY on every HTTP/2 connection, a new
   * connection closed at once and a new request answered 503, while the requests already open (the watches) go on
   * until they end. Without it, the watches that the stop ends would come back at once and be cut again.
   */
  public void refuseNew() {
    stopping = true;
    connections.values().forEach(connection -> {
      try {
        connection.goAway(0); // NO_ERROR: the streams it carries go on
      } catch (UnsupportedOperationException e) {
        // an HTTP/1.1 connection: its next request is answered 503
      }
    });
  }

  public synchronized void stop() {
    if (server == null) {
      return;
    }
    await(server.close());
    await(vertx.close());
    server = null;
    vertx = null;
    connections.clear();
    stopping = false;
  }

  /** The open client connections, each one TCP connection whatever its protocol. */
  public int openConnections() {
    return connections.size();
  }

  /** How many requests arrived per protocol ({@code http/1.1}, {@code h2}) since the server was made. */
  public Map<String, Long> requestsByProtocol() {
    Map<String, Long> counts = new TreeMap<>();
    requestsByProtocol.forEach((protocol, count) -> counts.put(protocol, count.sum()));
    return counts;
  }

  public synchronized boolean isRunning() {
    return server != null;
  }

  public synchronized int port() {
    return port;
  }

  public String host() {
    return address.getHostAddress();
  }

  private static boolean isPlainHttpWatch(HttpServerRequest request) {
    String watch = request.getParam("watch");
    return request.method() == io.vertx.core.http.HttpMethod.GET
        && ("true".equals(watch) || "1".equals(watch))
        && !"websocket".equalsIgnoreCase(request.getHeader("Upgrade"));
  }

  /** A watch over plain HTTP: one JSON event per line on a chunked response, until either side ends it. */
  private void streamWatch(HttpServerRequest request) {
    RecordedRequest recorded = new RecordedRequest(request.version().alpnName().toUpperCase(Locale.ROOT),
        HttpMethod.GET, request.uri(), Headers.builder().addAll(request.headers()).build(), new Buffer());
    MockResponse response = dispatcher.dispatch(recorded);
    HttpServerResponse out = request.response();
    WatchSession session = Watches.sessionOf(response);
    if (session == null) {
      out.setStatusCode(response.code());
      response.getHeaders().toMultimap().forEach((k, v) -> out.headers().add(k, v));
      out.end(response.getBody() == null ? "" : response.getBody().readUtf8());
      return;
    }
    out.setChunked(true).setStatusCode(200).putHeader("Content-Type", "application/json");
    // Events come from any thread (updates, the bookmark timer, stop) holding the dispatcher's locks, while Vert.x
    // calls this handler holding the connection's lock: a write from another thread would take the connection's lock
    // too, and the two deadlock. So every write and the end run on the request's event loop, in the order sent.
    Context context = Vertx.currentContext();
    AtomicBoolean gone = new AtomicBoolean();
    session.attach(new WatchSession.Sink() {
      @Override
      public void send(String json) {
        if (gone.get()) {
          throw new IllegalStateException("the client closed the watch");
        }
        context.runOnContext(v -> {
          if (!out.closed() && !out.ended()) {
            out.write(json + "\n");
          }
        });
      }

      @Override
      public void close() {
        context.runOnContext(v -> {
          if (!out.ended() && !out.closed()) {
            out.end();
          }
        });
      }
    });
    out.closeHandler(v -> {
      gone.set(true);
      dispatcher.watches().close(session);
    });
    out.writeHead(); // as the API server does: the client learns at once that the watch is established
    dispatcher.watches().open(session);
    if (out.closed()) {
      gone.set(true);
      dispatcher.watches().close(session); // closed before the handler was in place: it will not be called
    }
  }

  private static <T> T await(Future<T> future) {
    try {
      return future.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (Exception e) {
      throw new IllegalStateException(e.getCause() != null ? e.getCause() : e);
    }
  }
}
