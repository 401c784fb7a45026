package dev.nodelet.kube.internal;

import dev.nodelet.kube.internal.jetty.http.HttpField;
import dev.nodelet.kube.internal.jetty.http.HttpFields;
import dev.nodelet.kube.internal.jetty.http.HttpURI;
import dev.nodelet.kube.internal.jetty.http.HttpVersion;
import dev.nodelet.kube.internal.jetty.http.MetaData;
import dev.nodelet.kube.internal.jetty.http2.client.HTTP2Client;
import dev.nodelet.kube.internal.jetty.util.SocketAddressResolver;
import dev.nodelet.kube.internal.jetty.util.ssl.SslContextFactory;
import dev.nodelet.kube.internal.watch.EarlyBody;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.StandardHttpRequest;
import java.net.URI;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Streaming GETs (watches) over Jetty's low-level HTTP/2 client: one HTTP/2 stream per request and nothing else kept
 * for it while it is open, on a small pool of HTTP/2 sessions per API server. A session carries at most the
 * server's {@code SETTINGS_MAX_CONCURRENT_STREAMS}; when every open one is full, the next ones are opened, one per
 * limit's worth of waiting requests and at most {@value Http2Origin#MAX_OPENING} at once (requests wait for them),
 * so N watches take ceil(N / limit) connections. The sessions run on the {@link HTTP2Client} (I/O threads, timer,
 * TLS) of the client's high-level transport. Each server's sessions are a {@link Http2Origin}, each request an
 * {@link Http2Exchange}.
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

  /** Distinct header fields shared between requests (the same Authorization on every watch) before starting over. */
  private static final int SHARED_FIELDS = 64;
  /** Headers of HTTP/1.1 connections, which HTTP/2 forbids. */
  private static final Set<String> CONNECTION_HEADERS = Set.of("connection", "keep-alive", "proxy-connection",
      "transfer-encoding", "upgrade", "host", "te");

  private final HTTP2Client http2;
  private final SslContextFactory.Client ssl;
  /** The high-level client's, which exists once that client has started. */
  private final Supplier<SocketAddressResolver> resolver;
  private final Http2Transport.Timing timing;
  private final Map<String, Http2Origin> origins = new ConcurrentHashMap<>();
  private final Map<HttpField, HttpField> sharedFields = new ConcurrentHashMap<>();
  private volatile boolean closed;

  Http2Streams(HTTP2Client http2, SslContextFactory.Client ssl, Supplier<SocketAddressResolver> resolver,
      Http2Transport.Timing timing) {
    this.http2 = http2;
    this.ssl = ssl;
    this.resolver = resolver;
    this.timing = timing;
  }

  /** Whether this request goes here: a streaming GET over TLS to a server that has not refused HTTP/2. */
  boolean accepts(StandardHttpRequest request) {
    if (closed || !request.isForStreaming() || !"GET".equals(request.method()) || request.body() != null
        || !"https".equalsIgnoreCase(request.uri().getScheme())) {
      return false;
    }
    Http2Origin origin = origins.get(key(request.uri()));
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
    Http2Exchange exchange = new Http2Exchange(request, consumer, metaData(request), overHttp11,
        early == null ? null : early.gate());
    CompletableFuture<HttpResponse<AsyncBody>> response = exchange.response();
    if (early != null) {
      early.sent(exchange);
    }
    origins.computeIfAbsent(key(uri), k -> new Http2Origin(this, uri.getHost(), port(uri))).submit(exchange);
    return response;
  }

  /** Fails every waiting request and closes every session; their streams end with them. */
  void close() {
    closed = true;
    origins.values().forEach(Http2Origin::close);
  }

  /** The sessions open now, all servers together (for tests). */
  int sessions() {
    return origins.values().stream().mapToInt(Http2Origin::sessions).sum();
  }

  /** The sessions being opened now, all servers together (for tests). */
  int opening() {
    return origins.values().stream().mapToInt(Http2Origin::opening).sum();
  }

  /** The streams open or being opened now, all servers together (for tests). */
  int streams() {
    return origins.values().stream().mapToInt(Http2Origin::streams).sum();
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

  private static String key(URI uri) {
    return uri.getHost().toLowerCase(Locale.ROOT) + ":" + port(uri);
  }

  private static int port(URI uri) {
    return uri.getPort() == -1 ? 443 : uri.getPort();
  }

  boolean isClosed() {
    return closed;
  }

  HTTP2Client http2() {
    return http2;
  }

  SslContextFactory.Client ssl() {
    return ssl;
  }

  SocketAddressResolver resolver() {
    return resolver.get();
  }

  Http2Transport.Timing timing() {
    return timing;
  }
}
