package dev.nodelet.kube.internal;

import dev.nodelet.kube.internal.jetty.http.HttpField;
import dev.nodelet.kube.internal.jetty.http.HttpFields;
import dev.nodelet.kube.internal.jetty.http.HttpURI;
import dev.nodelet.kube.internal.jetty.http.HttpVersion;
import dev.nodelet.kube.internal.jetty.http.MetaData;
import dev.nodelet.kube.internal.jetty.http2.ErrorCode;
import dev.nodelet.kube.internal.jetty.http2.HTTP2Session;
import dev.nodelet.kube.internal.jetty.http2.api.Session;
import dev.nodelet.kube.internal.jetty.http2.api.Stream;
import dev.nodelet.kube.internal.jetty.http2.client.HTTP2Client;
import dev.nodelet.kube.internal.jetty.http2.frames.DataFrame;
import dev.nodelet.kube.internal.jetty.http2.frames.GoAwayFrame;
import dev.nodelet.kube.internal.jetty.http2.frames.HeadersFrame;
import dev.nodelet.kube.internal.jetty.http2.frames.PushPromiseFrame;
import dev.nodelet.kube.internal.jetty.http2.frames.ResetFrame;
import dev.nodelet.kube.internal.jetty.http2.frames.SettingsFrame;
import dev.nodelet.kube.internal.jetty.util.Callback;
import dev.nodelet.kube.internal.jetty.util.Promise;
import dev.nodelet.kube.internal.jetty.util.SocketAddressResolver;
import dev.nodelet.kube.internal.jetty.util.ssl.SslContextFactory;
import dev.nodelet.kube.internal.jetty.util.thread.Scheduler;
import dev.nodelet.kube.internal.watch.EarlyBody;
import dev.nodelet.kube.internal.watch.StartGate;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.StandardHttpRequest;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import javax.net.ssl.SSLHandshakeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Streaming GETs (watches) over Jetty's low-level HTTP/2 client: one HTTP/2 stream per request and nothing else kept
 * for it while it is open, on a small pool of HTTP/2 sessions per API server. A session carries at most the
 * server's {@code SETTINGS_MAX_CONCURRENT_STREAMS}; when every open one is full, the next ones are opened, one per
 * limit's worth of waiting requests and at most {@value #MAX_OPENING} at once (requests wait for them), so N watches
 * take ceil(N / limit) connections. The sessions run on the
 * {@link HTTP2Client} (I/O threads, timer, TLS) of the client's high-level transport.
 *
 * <p>Requests come after fabric8's interceptors (authorization, impersonation), so credentials stay fabric8's
 * business. Body bytes reach the consumer one chunk per {@link AsyncBody#consume()}: the HTTP/2 flow-control window
 * of a stream is given back only then. Cancelling resets the stream at once, also before its response arrived; a
 * request still waiting for a session is dropped unsent.
 *
 * <p>A request with a {@link EarlyBody#gate() gate} (a watch's restart) asks it when it would get its stream, not
 * when it was submitted: after an outage, restarts wait here for the new sessions and would otherwise leave together
 * once one is ready. One that the gate refuses stays waiting and is dispatched again when the gate says it conforms.
 */
final class Http2Streams {

  private static final Logger LOG = LoggerFactory.getLogger(Http2Streams.class);

  /** Streams a session is given before the server's SETTINGS say otherwise: none; it is used once they arrive. */
  private static final int NOT_READY = 0;
  /** Streams a new session is expected to take until a server's SETTINGS say (a kube-apiserver's default). */
  private static final int EXPECTED_STREAMS = 100;
  /**
   * Sessions opened at once at most: 5,000 watches starting together wait for 50 TLS handshakes, which one after
   * another take tens of seconds on a loaded machine.
   */
  private static final int MAX_OPENING = 8;
  /**
   * After a session could not be opened, none is tried for this long, doubling with each failure up to
   * {@link #MAX_CONNECT_BACKOFF_NANOS}: a server that is down or stopping is not handed a connection per restart.
   */
  private static final long CONNECT_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
  private static final long MAX_CONNECT_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
  /** How long an opening may take from the connect to the server's SETTINGS (a TLS handshake on a busy server). */
  static final int OPENING_TIMEOUT_SECONDS = 10;
  /** Distinct header fields shared between requests (the same Authorization on every watch) before starting over. */
  private static final int SHARED_FIELDS = 64;
  /** Headers of HTTP/1.1 connections, which HTTP/2 forbids. */
  private static final Set<String> CONNECTION_HEADERS = Set.of("connection", "keep-alive", "proxy-connection",
      "transfer-encoding", "upgrade", "host", "te");

  private final HTTP2Client http2;
  private final SslContextFactory.Client ssl;
  /** The high-level client's, which exists once that client has started. */
  private final Supplier<SocketAddressResolver> resolver;
  private final Map<String, Origin> origins = new ConcurrentHashMap<>();
  private final Map<HttpField, HttpField> sharedFields = new ConcurrentHashMap<>();
  private volatile boolean closed;

  Http2Streams(HTTP2Client http2, SslContextFactory.Client ssl, Supplier<SocketAddressResolver> resolver) {
    this.http2 = http2;
    this.ssl = ssl;
    this.resolver = resolver;
  }

  /** Whether this request goes here: a streaming GET over TLS to a server that has not refused HTTP/2. */
  boolean accepts(StandardHttpRequest request) {
    if (closed || !request.isForStreaming() || !"GET".equals(request.method()) || request.body() != null
        || !"https".equalsIgnoreCase(request.uri().getScheme())) {
      return false;
    }
    Origin origin = origins.get(key(request.uri()));
    return origin == null || !origin.noHttp2;
  }

  /**
   * Sends a streaming request on a stream of its own; {@code overHttp11} sends it instead if the server turns out to
   * offer no HTTP/2 while it waits for a session.
   */
  CompletableFuture<HttpResponse<AsyncBody>> send(StandardHttpRequest request,
      io.fabric8.kubernetes.client.http.AsyncBody.Consumer<List<ByteBuffer>> consumer,
      Supplier<CompletableFuture<HttpResponse<AsyncBody>>> overHttp11) {
    URI uri = request.uri();
    EarlyBody early = consumer instanceof EarlyBody e ? e : null;
    Exchange exchange = new Exchange(request, consumer, metaData(request), overHttp11,
        early == null ? null : early.gate());
    CompletableFuture<HttpResponse<AsyncBody>> response = exchange.response;
    if (early != null) {
      early.sent(exchange);
    }
    origins.computeIfAbsent(key(uri), k -> new Origin(uri.getHost(), port(uri))).submit(exchange);
    return response;
  }

  /** Fails every waiting request and closes every session; their streams end with them. */
  void close() {
    closed = true;
    origins.values().forEach(Origin::close);
  }

  /** The sessions open now, all servers together (for tests). */
  int sessions() {
    return origins.values().stream().mapToInt(Origin::sessions).sum();
  }

  /** The sessions being opened now, all servers together (for tests). */
  int opening() {
    return origins.values().stream().mapToInt(Origin::opening).sum();
  }

  /** The streams open or being opened now, all servers together (for tests). */
  int streams() {
    return origins.values().stream().mapToInt(Origin::streams).sum();
  }

  private MetaData.Request metaData(StandardHttpRequest request) {
    URI uri = request.uri();
    HttpFields.Mutable fields = HttpFields.build();
    request.headers().forEach((name, values) -> {
      if (!CONNECTION_HEADERS.contains(name.toLowerCase(Locale.ROOT))) {
        values.forEach(value -> fields.add(shared(new HttpField(name, value))));
      }
    });
    String pathQuery = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
    // mutable, so that it can be cleared once sent: the stream keeps its request for good
    HttpURI.Mutable target = HttpURI.build().scheme(uri.getScheme()).host(uri.getHost()).port(port(uri))
        .pathQuery(pathQuery);
    // this constructor keeps the target as given (the shorter ones keep an immutable copy)
    return new MetaData.Request(System.nanoTime(), "GET", target, HttpVersion.HTTP_2, fields, -1, null);
  }

  /** The same field object for the same header on every request: a token is then held once, not per watch. */
  private HttpField shared(HttpField field) {
    HttpField known = sharedFields.putIfAbsent(field, field);
    if (known != null) {
      return known;
    }
    if (sharedFields.size() > SHARED_FIELDS) {
      sharedFields.clear();
    }
    return field;
  }

  /** GOAWAY, then the connection itself: a server need not close it when a client says it is going. */
  private static void end(Session session) {
    Runnable disconnect = () -> {
      if (session instanceof HTTP2Session http2Session) {
        http2Session.disconnect();
      }
    };
    session.close(ErrorCode.NO_ERROR.code, "closed", Callback.from(disconnect, failure -> disconnect.run()));
  }

  private static String key(URI uri) {
    return uri.getHost().toLowerCase(Locale.ROOT) + ":" + port(uri);
  }

  private static int port(URI uri) {
    return uri.getPort() == -1 ? 443 : uri.getPort();
  }

  /** The sessions to one API server and the requests waiting for a stream on one of them. */
  private final class Origin {
    private final String host;
    private final int port;
    private final List<Connection> connections = new ArrayList<>();
    private final ArrayDeque<Exchange> waiting = new ArrayDeque<>();
    /** Sessions being opened. */
    private int opening;
    /**
     * Streams that ended because their session went away (GOAWAY, a broken connection) and have not started again:
     * after an API server restart their watches come back through the restart bucket, a few per interval, and the
     * sessions they need are opened as soon as the first of them waits, not one at a time as each fills.
     */
    private int lost;
    /** Streams a session takes: the server's limit once one session has said it, a kube-apiserver's until then. */
    private int expectedStreams = EXPECTED_STREAMS;
    /** The server negotiated no HTTP/2: its streaming requests take the high-level client. */
    volatile boolean noHttp2;
    /** The next dispatch of requests a gate held back, and when it runs (nanoTime); null when none is due. */
    private Scheduler.Task held;
    private long heldUntil;
    /** Openings that failed in a row; the last one's error, and when (nanoTime) the next may be tried. */
    private int connectFailures;
    private IOException connectError;
    private long connectAgainAt;

    Origin(String host, int port) {
      this.host = host;
      this.port = port;
    }

    void submit(Exchange exchange) {
      IOException unreachable = null;
      synchronized (this) {
        if (!closed) {
          if (connections.isEmpty() && opening == 0 && connectError != null
              && System.nanoTime() - connectAgainAt < 0) {
            unreachable = connectError; // no session, and the last opening failed moments ago
          } else {
            waiting.add(exchange);
          }
        }
      }
      if (closed) {
        exchange.fail(new IOException("the Kubernetes client is closed"));
      } else if (unreachable != null) {
        exchange.fail(unreachable);
      } else {
        dispatch();
      }
    }

    /**
     * Gives waiting requests a stream on a session with room, and opens sessions for those beyond the room (and for
     * the lost streams still to come back). A request its gate refuses keeps its place; the others of that gate are
     * not asked again in this round.
     */
    private void dispatch() {
      List<Exchange> start = new ArrayList<>();
      int open = 0;
      long holdNanos = Long.MAX_VALUE;
      long now = System.nanoTime();
      synchronized (this) {
        StartGate refused = null;
        for (Iterator<Exchange> it = waiting.iterator(); it.hasNext(); ) {
          Exchange next = it.next();
          if (next.cancelled) {
            it.remove();
            continue;
          }
          if (next.gate != null && next.gate == refused) {
            continue;
          }
          Connection room = null;
          for (Connection c : connections) {
            if (c.streams < c.maxStreams && !c.session.isClosed()) {
              room = c;
              break;
            }
          }
          if (room == null) {
            break;
          }
          if (next.gate != null) {
            long wait = next.gate.tryStart();
            if (wait > 0) {
              refused = next.gate;
              holdNanos = Math.min(holdNanos, wait);
              continue;
            }
          }
          it.remove();
          room.streams++;
          if (lost > 0) {
            lost--;
          }
          next.connection = room;
          start.add(next);
        }
        // one session per session's worth of the waiting requests, or of the streams lost with the sessions that
        // went away (their restarts come back a few at a time), beyond the room of the open ones; a few at a time,
        // and only while requests come
        long free = 0;
        for (Connection c : connections) {
          if (!c.session.isClosed()) {
            free += Math.min(c.maxStreams - c.streams, expectedStreams);
          }
        }
        long demand = Math.max(waiting.size(), lost) - free;
        int wanted = demand <= 0 || waiting.isEmpty() && start.isEmpty() ? 0
            : (int) Math.min(MAX_OPENING, (demand + expectedStreams - 1) / expectedStreams);
        if (!closed && wanted > opening) {
          if (connectError != null && now - connectAgainAt < 0) {
            holdNanos = Math.min(holdNanos, connectAgainAt - now); // the last opening failed moments ago
          } else {
            open = wanted - opening;
            opening = wanted;
          }
        }
      }
      for (Exchange exchange : start) {
        exchange.start(exchange.connection.session);
      }
      for (int i = 0; i < open; i++) {
        connect();
      }
      if (holdNanos != Long.MAX_VALUE) {
        dispatchIn(holdNanos);
      }
    }

    /** Dispatches again after {@code nanos}, unless a dispatch is due before then: one timer task per origin. */
    private void dispatchIn(long nanos) {
      long at = System.nanoTime() + nanos;
      synchronized (this) {
        if (closed || held != null && heldUntil - at <= 0) {
          return;
        }
        if (held != null) {
          held.cancel();
        }
        heldUntil = at;
        held = http2.getScheduler().schedule(() -> {
          synchronized (this) {
            held = null;
          }
          dispatch();
        }, nanos, TimeUnit.NANOSECONDS);
      }
    }

    /** Resolves the host without blocking, as the high-level client does, then opens a session. */
    private void connect() {
      Connection connection = new Connection(this);
      // nothing else ends an opening that the server never answers: the client's connections have no idle timeout
      connection.deadline = http2.getScheduler().schedule(() -> {
        connectFailed(connection, new IOException("no HTTP/2 SETTINGS from the server within "
            + OPENING_TIMEOUT_SECONDS + " s of connecting"));
        Session session = connection.session;
        if (session != null) {
          end(session);
        }
      }, OPENING_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      resolver.get().resolve(host, port, new Promise<>() {
        @Override
        public void succeeded(List<InetSocketAddress> addresses) {
          connect(connection, addresses.get(0));
        }

        @Override
        public void failed(Throwable failure) {
          connectFailed(connection, failure);
        }
      });
    }

    /** The address keeps the host name: TLS sends it (SNI) and verifies the certificate against it. */
    private void connect(Connection connection, InetSocketAddress address) {
      try {
        http2.connect(ssl, address, connection, new Promise<>() {
          @Override
          public void succeeded(Session session) {
            connection.session = session; // used once the server's SETTINGS arrive
          }

          @Override
          public void failed(Throwable failure) {
            connectFailed(connection, failure);
          }
        });
      } catch (RuntimeException e) {
        connectFailed(connection, e);
      }
    }

    /** The server's first SETTINGS: the session takes streams from now on. */
    void ready(Connection connection, Session session) {
      synchronized (this) {
        connection.session = session;
        if (closed || connection.settled) {
          end(session); // closed, or its opening failed meanwhile
          return;
        }
        connection.settled = true;
        connection.deadline.cancel();
        connections.add(connection);
        opening--;
        connectFailures = 0;
        connectError = null;
        expectedStreams = connection.maxStreams == Integer.MAX_VALUE ? EXPECTED_STREAMS : connection.maxStreams;
      }
      dispatch();
    }

    /**
     * An opening failed: once per connection, whichever way it is reported (the host's resolution, the connect's
     * promise, the session's failure, its close, the deadline), as each counted opening ends once.
     */
    private void connectFailed(Connection connection, Throwable failure) {
      List<Exchange> failed;
      boolean first = false;
      boolean refused = isNoHttp2(failure);
      synchronized (this) {
        if (connection.settled) {
          return;
        }
        connection.settled = true;
        connection.deadline.cancel();
        opening--;
        failed = new ArrayList<>(waiting);
        waiting.clear();
        if (refused && !noHttp2) {
          noHttp2 = true;
          first = true;
        }
      }
      if (refused) {
        // from now on this server's streaming requests take the high-level client, as do the waiting ones
        if (first) {
          LOG.info("The API server {}:{} offers no HTTP/2 (ALPN): its watches use HTTP/1.1, one connection each",
              host, port);
        }
        // once per server: restarts among them pass no gate now (they wait for no session any more)
        failed.forEach(Exchange::sendOverHttp11);
        return;
      }
      IOException error = new IOException("cannot connect to " + host + ":" + port + ": " + failure, failure);
      synchronized (this) {
        connectFailures++;
        connectError = error;
        connectAgainAt = System.nanoTime() + Math.min(MAX_CONNECT_BACKOFF_NANOS,
            CONNECT_BACKOFF_NANOS << Math.min(connectFailures - 1, 10));
      }
      failed.forEach(exchange -> exchange.fail(error));
    }

    void closed(Connection connection) {
      boolean beforeReady;
      synchronized (this) {
        connections.remove(connection);
        beforeReady = !connection.settled;
      }
      if (beforeReady) {
        connectFailed(connection, new IOException("the connection closed before the server's SETTINGS"));
      } else {
        dispatch();
      }
    }

    /**
     * A stream ended. A session left without streams is closed while another is open and no request waits: new
     * streams go to the first sessions with room, so after watches end the later sessions drain and go.
     */
    void released(Connection connection) {
      Session surplus = null;
      synchronized (this) {
        connection.streams--;
        if (connection.session.isClosed()) {
          lost++;
        }
        if (connection.streams == 0 && waiting.isEmpty() && connections.size() > 1
            && connections.remove(connection)) {
          surplus = connection.session;
        }
      }
      if (surplus != null) {
        end(surplus);
      }
      dispatch();
    }

    void close() {
      List<Exchange> failed;
      List<Connection> open;
      synchronized (this) {
        failed = new ArrayList<>(waiting);
        waiting.clear();
        open = new ArrayList<>(connections);
        connections.clear();
        if (held != null) {
          held.cancel();
          held = null;
        }
      }
      IOException error = new IOException("the Kubernetes client is closed");
      failed.forEach(exchange -> exchange.fail(error));
      open.forEach(c -> end(c.session));
    }

    synchronized int sessions() {
      return connections.size();
    }

    synchronized int opening() {
      return opening;
    }

    synchronized int streams() {
      return connections.stream().mapToInt(c -> c.streams).sum();
    }

    /**
     * Whether the server refused HTTP/2, the one protocol a session offers: by the TLS alert that ALPN defines for
     * this (RFC 7301, {@code no_application_protocol}). The JDK reports a received alert by its name only.
     */
    private static boolean isNoHttp2(Throwable failure) {
      for (Throwable t = failure; t != null; t = t.getCause()) {
        if (t instanceof SSLHandshakeException && String.valueOf(t.getMessage()).contains("no_application_protocol")) {
          return true;
        }
      }
      return false;
    }
  }

  /** One HTTP/2 session of an origin and the streams it carries. */
  private static final class Connection extends Session.Listener.Adapter {
    private final Origin origin;
    volatile Session session;
    /** The server's limit; {@link #NOT_READY} until its SETTINGS arrive. Guarded by the origin. */
    int maxStreams = NOT_READY;
    /** Streams started and not yet ended. Guarded by the origin. */
    int streams;
    /** Whether its opening ended, ready or failed: it counts among the origin's openings until then. Guarded by it. */
    boolean settled;
    /** Fails the opening if the server's SETTINGS have not come by then; set before the connect starts. */
    Scheduler.Task deadline;

    Connection(Origin origin) {
      this.origin = origin;
    }

    @Override
    public void onSettings(Session session, SettingsFrame frame) {
      Integer max = frame.getSettings().get(SettingsFrame.MAX_CONCURRENT_STREAMS);
      boolean first;
      synchronized (origin) {
        first = maxStreams == NOT_READY;
        maxStreams = max == null ? (first ? Integer.MAX_VALUE : maxStreams) : Math.max(1, max);
      }
      if (first) {
        origin.ready(this, session);
      } else {
        origin.dispatch(); // a larger limit gives room
      }
    }

    @Override
    public boolean onIdleTimeout(Session session) {
      synchronized (origin) {
        if (streams > 0) {
          return false; // a quiet watch is not idle
        }
        origin.lost = 0; // a session stayed unused: the lost streams are not coming back
        return true;
      }
    }

    @Override
    public void onClose(Session session, GoAwayFrame frame) {
      origin.closed(this);
    }

    @Override
    public void onFailure(Session session, Throwable failure) {
      origin.closed(this);
    }
  }

  /**
   * One streaming request: the Jetty stream's listener, fabric8's body of its response, and the promise of its
   * stream. All of it is what a watch holds while it is open.
   */
  private static final class Exchange extends Stream.Listener.Adapter implements AsyncBody, Promise<Stream> {
    /** Until the response arrives. */
    private StandardHttpRequest request;
    private final io.fabric8.kubernetes.client.http.AsyncBody.Consumer<List<ByteBuffer>> consumer;
    /** Asked when the request would get its stream; null when it starts as soon as it has one. */
    final StartGate gate;
    /** Until sent; the request's target is cleared once the response arrives. */
    private MetaData.Request metaData;
    /** Until the response arrives: the same request over HTTP/1.1, for a server that refuses HTTP/2. */
    private Supplier<CompletableFuture<HttpResponse<AsyncBody>>> overHttp11;
    /** The response of the request sent over HTTP/1.1 instead, until it arrives: cancelling cancels it. */
    private CompletableFuture<HttpResponse<AsyncBody>> instead;
    /** Until completed: the stream must not keep the response (its headers) for the life of a watch. */
    private CompletableFuture<HttpResponse<AsyncBody>> response = new CompletableFuture<>();
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    volatile Connection connection;
    volatile boolean cancelled;
    private Stream stream;
    /** The data callback held until the consumer asks for more: the flow-control window is given back then. */
    private Callback unconsumed;
    private boolean released;

    Exchange(StandardHttpRequest request,
        io.fabric8.kubernetes.client.http.AsyncBody.Consumer<List<ByteBuffer>> consumer, MetaData.Request metaData,
        Supplier<CompletableFuture<HttpResponse<AsyncBody>>> overHttp11, StartGate gate) {
      this.request = request;
      this.consumer = consumer;
      this.metaData = metaData;
      this.overHttp11 = overHttp11;
      this.gate = gate;
    }

    /** Sends the request over HTTP/1.1 instead (never started here); its answer becomes this one's. */
    void sendOverHttp11() {
      Supplier<CompletableFuture<HttpResponse<AsyncBody>>> send;
      synchronized (this) {
        send = overHttp11;
        overHttp11 = null;
        metaData = null;
        request = null;
      }
      CompletableFuture<HttpResponse<AsyncBody>> answer;
      try {
        answer = send.get();
      } catch (RuntimeException e) {
        fail(e);
        return;
      }
      if (consumer instanceof EarlyBody early) {
        early.started(); // over HTTP/1.1 the request leaves when handed over, as on the high-level client's path
      }
      boolean cancel;
      synchronized (this) {
        instead = answer;
        cancel = cancelled;
      }
      if (cancel) {
        answer.cancel(true);
      }
      answer.whenComplete((answered, failure) -> {
        synchronized (this) {
          instead = null;
        }
        CompletableFuture<HttpResponse<AsyncBody>> r = takeResponse();
        if (r == null) {
          if (answered != null) {
            answered.body().cancel(); // cancelled meanwhile
          }
        } else if (answered != null) {
          r.complete(answered);
        } else {
          r.completeExceptionally(failure);
        }
      });
    }

    void start(Session session) {
      if (cancelled) {
        release();
        return;
      }
      session.newStream(new HeadersFrame(metaData, null, true), this, this);
    }

    // ---- Promise<Stream>: the stream is open (or could not be) ----

    @Override
    public void succeeded(Stream opened) {
      boolean reset;
      synchronized (this) {
        stream = opened;
        reset = cancelled;
      }
      if (reset) {
        reset(opened);
      } else if (consumer instanceof EarlyBody early) {
        early.started(); // its response is due from now on, not while it waited for a session
      }
    }

    @Override
    public void failed(Throwable failure) {
      fail(failure);
    }

    // ---- Stream.Listener ----

    @Override
    public void onHeaders(Stream s, HeadersFrame frame) {
      synchronized (this) {
        stream = s;
      }
      if (frame.getMetaData() instanceof MetaData.Response answer) {
        if (metaData != null && metaData.getURI() instanceof HttpURI.Mutable target) {
          target.clear(); // sent: the stream holds the request for good, its target need not be kept
        }
        Answer answered = new Answer(request, answer.getStatus(), answer.getFields(), this);
        metaData = null;
        request = null;
        overHttp11 = null;
        CompletableFuture<HttpResponse<AsyncBody>> r = takeResponse();
        if (r != null) {
          r.complete(answered);
        }
      }
      if (frame.isEndStream()) {
        end();
      }
    }

    @Override
    public void onBeforeData(Stream s) {
      // no demand: data waits in Jetty's queue until the consumer asks for it
    }

    @Override
    public void onData(Stream s, DataFrame frame, Callback callback) {
      if (cancelled) {
        callback.succeeded();
        return;
      }
      ByteBuffer data = frame.getData();
      ByteBuffer copy = ByteBuffer.allocate(data.remaining()).put(data).flip(); // Jetty reuses its buffers
      synchronized (this) {
        unconsumed = callback;
      }
      try {
        if (copy.hasRemaining()) {
          consumer.consume(List.of(copy), this);
        } else if (!frame.isEndStream()) {
          consume(); // an empty frame asks for nothing: read on
        }
      } catch (Exception e) {
        cancel();
        done.completeExceptionally(e);
        return;
      }
      if (frame.isEndStream()) {
        Callback c = takeUnconsumed();
        if (c != null) {
          c.succeeded();
        }
        end();
      }
    }

    @Override
    public void onReset(Stream s, ResetFrame frame) {
      fail(new IOException("the API server reset the stream (" + ErrorCode.toString(frame.getError(), "error "
          + frame.getError()) + ")"));
    }

    @Override
    public void onFailure(Stream s, int error, String reason, Throwable failure, Callback callback) {
      fail(failure != null ? failure : new IOException("the stream failed: " + reason));
      callback.succeeded();
    }

    @Override
    public boolean onIdleTimeout(Stream s, Throwable timeout) {
      return false; // a watch may be quiet for minutes: the server ends it
    }

    @Override
    public void onClosed(Stream s) {
      release();
    }

    @Override
    public Stream.Listener onPush(Stream s, PushPromiseFrame frame) {
      return null; // refused: an API server pushes nothing
    }

    // ---- AsyncBody ----

    @Override
    public void consume() {
      Stream s;
      Callback c;
      synchronized (this) {
        s = stream;
        c = unconsumed;
        unconsumed = null;
      }
      if (c != null) {
        c.succeeded();
      }
      if (s != null && !cancelled) {
        s.demand(1);
      }
    }

    @Override
    public CompletableFuture<Void> done() {
      return done;
    }

    @Override
    public void cancel() {
      Stream s;
      Callback c;
      CompletableFuture<HttpResponse<AsyncBody>> other;
      synchronized (this) {
        if (cancelled) {
          return;
        }
        cancelled = true;
        s = stream;
        c = unconsumed;
        unconsumed = null;
        other = instead;
      }
      if (other != null) {
        other.cancel(true);
      }
      if (c != null) {
        c.succeeded();
      }
      if (s != null) {
        reset(s);
      }
      // before the stream: start() or succeeded() resets it, or the origin drops it unsent
      done.cancel(false);
      CompletableFuture<HttpResponse<AsyncBody>> r = takeResponse();
      if (r != null) {
        r.completeExceptionally(new CancellationException("the request was cancelled"));
      }
    }

    // ----

    void fail(Throwable failure) {
      release();
      CompletableFuture<HttpResponse<AsyncBody>> r = takeResponse();
      if (r != null) {
        r.completeExceptionally(failure);
      }
      done.completeExceptionally(failure);
    }

    private void end() {
      done.complete(null);
      release();
    }

    private synchronized CompletableFuture<HttpResponse<AsyncBody>> takeResponse() {
      CompletableFuture<HttpResponse<AsyncBody>> r = response;
      response = null;
      return r;
    }

    private synchronized Callback takeUnconsumed() {
      Callback c = unconsumed;
      unconsumed = null;
      return c;
    }

    private void reset(Stream s) {
      s.reset(new ResetFrame(s.getId(), ErrorCode.CANCEL_STREAM_ERROR.code), Callback.NOOP);
      release();
    }

    /** The stream's place on its session is free: once, whichever way it ended. */
    private void release() {
      Connection c;
      synchronized (this) {
        if (released) {
          return;
        }
        released = true;
        c = connection;
      }
      if (c != null) {
        c.origin.released(c);
      }
    }
  }

  /** The response of a streaming request: its status and headers, and the exchange as its body. */
  private record Answer(HttpRequest request, int code, HttpFields fields, AsyncBody body)
      implements HttpResponse<AsyncBody> {

    @Override
    public List<String> headers(String name) {
      return fields.getValuesList(name);
    }

    @Override
    public Map<String, List<String>> headers() {
      Map<String, List<String>> headers = new LinkedHashMap<>();
      for (HttpField field : fields) {
        headers.computeIfAbsent(field.getName(), k -> new ArrayList<>()).add(field.getValue());
      }
      return headers;
    }

    @Override
    public Optional<HttpResponse<?>> previousResponse() {
      return Optional.empty();
    }
  }
}
