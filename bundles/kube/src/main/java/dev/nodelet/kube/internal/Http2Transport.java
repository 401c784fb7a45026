package dev.nodelet.kube.internal;

import dev.nodelet.kube.internal.jetty.client.ConnectionPool;
import dev.nodelet.kube.internal.jetty.client.HttpClient;
import dev.nodelet.kube.internal.jetty.client.HttpClientTransport;
import dev.nodelet.kube.internal.jetty.client.HttpDestination;
import dev.nodelet.kube.internal.jetty.client.HttpProxy;
import dev.nodelet.kube.internal.jetty.client.HttpRequest;
import dev.nodelet.kube.internal.jetty.client.MultiplexConnectionPool;
import dev.nodelet.kube.internal.jetty.client.Origin;
import dev.nodelet.kube.internal.jetty.client.Socks4Proxy;
import dev.nodelet.kube.internal.jetty.client.Socks5Proxy;
import dev.nodelet.kube.internal.jetty.client.api.Connection;
import dev.nodelet.kube.internal.jetty.client.api.Request;
import dev.nodelet.kube.internal.jetty.client.dynamic.HttpClientTransportDynamic;
import dev.nodelet.kube.internal.jetty.client.http.HttpClientConnectionFactory;
import dev.nodelet.kube.internal.jetty.client.http.HttpClientTransportOverHTTP;
import dev.nodelet.kube.internal.jetty.fabric8.JettyHttpClient;
import dev.nodelet.kube.internal.jetty.fabric8.JettyHttpClientBuilder;
import dev.nodelet.kube.internal.jetty.fabric8.JettyHttpClientFactory;
import dev.nodelet.kube.internal.jetty.http2.client.HTTP2Client;
import dev.nodelet.kube.internal.jetty.http2.client.http.ClientConnectionFactoryOverHTTP2;
import dev.nodelet.kube.internal.jetty.io.ClientConnector;
import dev.nodelet.kube.internal.jetty.util.Pool;
import dev.nodelet.kube.internal.jetty.util.ssl.SslContextFactory;
import dev.nodelet.kube.internal.jetty.util.thread.QueuedThreadPool;
import dev.nodelet.kube.internal.jetty.util.thread.ScheduledExecutorScheduler;
import dev.nodelet.kube.internal.jetty.websocket.client.WebSocketClient;
import dev.nodelet.kube.internal.watch.StartGate;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.StandardHttpClientBuilder;
import io.fabric8.kubernetes.client.http.StandardHttpRequest;
import io.fabric8.kubernetes.client.http.TlsVersion;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.stream.Stream;

/**
 * fabric8's HTTP client over Jetty's HTTP/2 client, built for many long watches against an API server that allows
 * 100 streams per connection: over TLS, HTTP/2 negotiated by ALPN (HTTP/1.1 when the server has no HTTP/2), streams
 * multiplexed on a pool that opens the next connection when every open one carries the server's
 * {@code SETTINGS_MAX_CONCURRENT_STREAMS}; over plain HTTP, HTTP/1.1 (a plain-HTTP API server is {@code kubectl
 * proxy}, which speaks no cleartext HTTP/2). All connections share {@value #IO_THREADS} I/O threads and one timer
 * thread, named after the client; closing the client ends them and its connections. Every request is measured in
 * {@link KubeMetrics} when there are metrics.
 */
final class Http2Transport extends JettyHttpClientFactory {

  /** Jetty's threads, all started with the client: one selects for every connection, the rest run callbacks. */
  static final int IO_THREADS = 4;
  /** Connections per API server at most: 100 streams each, far beyond any node's watches. */
  static final int MAX_CONNECTIONS = 1_000;
  /** Requests waiting for a connection's stream: a node's watches all starting at once must not be refused. */
  static final int MAX_QUEUED_REQUESTS = 100_000;
  /**
   * The streams a new HTTP/2 connection is assumed to take until the server's SETTINGS say (a kube-apiserver's
   * default): while connections are being opened, one more is opened per this many waiting requests, not one per
   * request.
   */
  static final int EXPECTED_STREAMS = 100;
  private static final int IDLE_THREAD_MILLIS = 30_000;
  /** A connection carrying no request closes after this long, as client-go's idle connections do. */
  static final long IDLE_CONNECTION_MILLIS = 90_000;

  private final String threadPrefix;
  private final Optional<KubeMetrics> metrics;
  private final Timing timing;

  Http2Transport(String threadPrefix, Optional<KubeMetrics> metrics) {
    this(threadPrefix, metrics, Timing.DEFAULT);
  }

  /** For tests: shorter times, a driven clock. */
  Http2Transport(String threadPrefix, Optional<KubeMetrics> metrics, Timing timing) {
    this.threadPrefix = threadPrefix;
    this.metrics = metrics;
    this.timing = timing;
  }

  /**
   * The times of a transport.
   *
   * @param idleConnectionMillis after which a connection that carries no request closes
   * @param openingTimeout how long an HTTP/2 session's opening may take, from the connect to the server's SETTINGS
   * @param nanoTime the clock of the pause after a session could not be opened
   */
  record Timing(long idleConnectionMillis, Duration openingTimeout, LongSupplier nanoTime) {
    static final Timing DEFAULT = new Timing(IDLE_CONNECTION_MILLIS,
        Duration.ofSeconds(Http2Origin.OPENING_TIMEOUT_SECONDS), System::nanoTime);
  }

  @Override
  public JettyHttpClientBuilder newBuilder() {
    return new Builder(this);
  }

  /** Builds Jetty's client itself; fabric8's forces HTTP/1.1 and default (unbounded, unnamed) thread pools. */
  private static final class Builder extends JettyHttpClientBuilder {

    Builder(Http2Transport factory) {
      super(factory);
      this.preferHttp11 = false;
    }

    @Override
    public JettyHttpClient build() {
      if (client != null) {
        // a derived client (fabric8's per-request options) shares the Jetty clients of the one it derives from
        Metered origin = (Metered) client;
        return new Metered(this, origin.jetty, origin.webSockets, client.getClosed(), origin.metrics, origin.streams);
      }
      Http2Transport factory = (Http2Transport) clientFactory;
      QueuedThreadPool threads = new QueuedThreadPool(IO_THREADS, IO_THREADS, IDLE_THREAD_MILLIS, 0, null, null) {
        @Override
        public Thread newThread(Runnable runnable) {
          Thread thread = super.newThread(runnable);
          // Jetty finds its TLS ALPN support with ServiceLoader on the connecting thread's context class loader:
          // this bundle's, which holds Jetty (in OSGi the framework's would find nothing)
          thread.setContextClassLoader(Http2Transport.class.getClassLoader());
          return thread;
        }
      };
      threads.setName(factory.threadPrefix);
      threads.setDaemon(true);
      ScheduledExecutorScheduler timer = new ScheduledExecutorScheduler(factory.threadPrefix + "-timer", true);

      SslContextFactory.Client ssl = sslContextFactory();
      HTTP2Client http2 = new HTTP2Client(connector(ssl));
      HttpClient jetty = new HttpClient(http2Transport(http2));
      jetty.setExecutor(threads);
      jetty.setScheduler(timer);
      jetty.setMaxConnectionsPerDestination(MAX_CONNECTIONS);
      jetty.setMaxRequestsQueuedPerDestination(MAX_QUEUED_REQUESTS);
      jetty.setFollowRedirects(followRedirects);
      // a connection left without a request closes (an HTTP/1.1 pool shrinks again after a burst, an unused HTTP/2
      // session goes); a request itself never idles out: a quiet watch sends nothing for minutes (the server ends
      // it), and the others have their request timeout
      jetty.setIdleTimeout(factory.timing.idleConnectionMillis());
      jetty.getRequestListeners().add(new Request.Listener.Adapter() {
        @Override
        public void onQueued(Request request) {
          request.idleTimeout(0, TimeUnit.MILLISECONDS);
        }
      });
      if (connectTimeout != null) {
        jetty.setConnectTimeout(connectTimeout.toMillis());
      }
      // WebSocket (exec, attach) needs HTTP/1.1; it starts only when first used
      HttpClient webSocketHttp = new HttpClient(new HttpClientTransportOverHTTP(connector(sslContextFactory())));
      webSocketHttp.setExecutor(threads);
      webSocketHttp.setScheduler(timer);
      webSocketHttp.setMaxConnectionsPerDestination(MAX_CONNECTIONS);
      WebSocketClient webSockets = new WebSocketClient(webSocketHttp);
      webSockets.setMaxBinaryMessageSize(Integer.MAX_VALUE);
      webSockets.setMaxTextMessageSize(Integer.MAX_VALUE);
      webSockets.setMaxFrameSize(Integer.MAX_VALUE);
      if (connectTimeout != null) {
        webSocketHttp.setConnectTimeout(connectTimeout.toMillis());
      }
      proxy(jetty);
      proxy(webSocketHttp);
      return new Metered(this, jetty, webSockets, new AtomicBoolean(), factory.metrics, new Http2Streams(http2, ssl,
          jetty::getSocketAddressResolver, factory.timing));
    }

    private SslContextFactory.Client sslContextFactory() {
      SslContextFactory.Client ssl = new SslContextFactory.Client();
      if (sslContext != null) {
        ssl.setSslContext(sslContext);
      }
      if (tlsVersions != null && tlsVersions.length > 0) {
        ssl.setIncludeProtocols(Stream.of(tlsVersions).map(TlsVersion::javaName).toArray(String[]::new));
      }
      return ssl;
    }

    private static ClientConnector connector(SslContextFactory.Client ssl) {
      ClientConnector connector = new ClientConnector();
      connector.setSslContextFactory(ssl);
      connector.setSelectors(1);
      return connector;
    }

    /** HTTP/2 first, HTTP/1.1 as ALPN's fallback; plain HTTP is HTTP/1.1. */
    private static HttpClientTransport http2Transport(HTTP2Client http2Client) {
      ClientConnectionFactoryOverHTTP2.HTTP2 http2 = new ClientConnectionFactoryOverHTTP2.HTTP2(http2Client);
      HttpClientTransportDynamic transport = new HttpClientTransportDynamic(http2Client.getClientConnector(), http2,
          HttpClientConnectionFactory.HTTP11) {
        @Override
        public Origin newOrigin(HttpRequest request) {
          if (HttpClient.isSchemeSecure(request.getScheme())) {
            return super.newOrigin(request);
          }
          return getHttpClient().createOrigin(request, HttpClientTransportOverHTTP.HTTP11);
        }
      };
      transport.setConnectionPoolFactory(Builder::connectionPool);
      return transport;
    }

    /**
     * A pool whose HTTP/2 connections each carry as many streams as their server allows and HTTP/1.1 connections one
     * request; Jetty's default assumes one stream per connection being opened, so a burst of watches opened a
     * connection each.
     */
    private static ConnectionPool connectionPool(HttpDestination destination) {
      Pool<Connection> pool = new Pool<>(Pool.StrategyType.FIRST,
          destination.getHttpClient().getMaxConnectionsPerDestination(), false) {
        @Override
        protected int getMaxMultiplex(Connection connection) {
          return connection instanceof ConnectionPool.Multiplexable multiplexable
              ? multiplexable.getMaxMultiplex() : 1;
        }
      };
      return new MultiplexConnectionPool(destination, pool, destination,
          HttpClient.isSchemeSecure(destination.getScheme()) ? EXPECTED_STREAMS : 1);
    }

    private void proxy(HttpClient jetty) {
      if (proxyType == io.fabric8.kubernetes.client.http.HttpClient.ProxyType.DIRECT || proxyAddress == null) {
        return;
      }
      Origin.Address address = new Origin.Address(proxyAddress.getHostString(), proxyAddress.getPort());
      switch (proxyType) {
        case HTTP -> jetty.getProxyConfiguration().addProxy(new HttpProxy(address, false));
        case SOCKS4 -> jetty.getProxyConfiguration().addProxy(new Socks4Proxy(address, false));
        case SOCKS5 -> jetty.getProxyConfiguration().addProxy(new Socks5Proxy(address, false));
        default -> throw new KubernetesClientException("proxy type " + proxyType + " is not supported; use an HTTP, "
            + "SOCKS4 or SOCKS5 proxy");
      }
      if (proxyAuthorization != null) {
        // fabric8 sends the Proxy-Authorization header through its interceptor
        addProxyAuthInterceptor();
      }
    }
  }

  /** The HTTP/2 streams of a client this transport built (for tests). */
  static Http2Streams streams(io.fabric8.kubernetes.client.http.HttpClient client) {
    return ((Metered) client).streams;
  }

  /**
   * fabric8's Jetty client, measuring every request it sends from the start to the response's status line, or to
   * the failure of a request that got none. fabric8's interceptors hear only of failed responses, so the measuring
   * happens here.
   */
  private static final class Metered extends JettyHttpClient implements StartGate.Transport {
    private final HttpClient jetty;
    private final WebSocketClient webSockets;
    private final Optional<KubeMetrics> metrics;
    private final Http2Streams streams;

    Metered(StandardHttpClientBuilder<JettyHttpClient, JettyHttpClientFactory, JettyHttpClientBuilder> builder,
        HttpClient jetty, WebSocketClient webSockets, AtomicBoolean closed,
        Optional<KubeMetrics> metrics, Http2Streams streams) {
      super(builder, jetty, webSockets, closed);
      this.jetty = jetty;
      this.webSockets = webSockets;
      this.metrics = metrics;
      this.streams = streams;
    }

    @Override
    public CompletableFuture<HttpResponse<AsyncBody>> consumeBytesDirect(StandardHttpRequest request,
        AsyncBody.Consumer<List<ByteBuffer>> consumer) {
      if (isClosed()) {
        // fabric8's Jetty client starts its Jetty client on every request: once closed, nothing would stop it again.
        // Refused as fabric8's JDK client refuses it
        throw new IllegalStateException("the Kubernetes client is closed: " + request.method() + " " + request.uri()
            + " was not sent");
      }
      long start = System.nanoTime();
      CompletableFuture<HttpResponse<AsyncBody>> response = send(request, consumer);
      if (metrics.isEmpty()) {
        return response;
      }
      KubeMetrics m = metrics.get();
      // the metric's callback is dropped once the response arrives: nothing of it stays with an open watch
      return response.whenComplete((answer, failure) -> m.record(request.method(), request.uri(),
          answer == null ? KubeMetrics.NO_ANSWER : Integer.toString(answer.code()), System.nanoTime() - start));
    }

    /** Streaming GETs (watches) over HTTP/2 streams of their own; the rest through Jetty's high-level client. */
    private CompletableFuture<HttpResponse<AsyncBody>> send(StandardHttpRequest request,
        AsyncBody.Consumer<List<ByteBuffer>> consumer) {
      if (!streams.accepts(request)) {
        return super.consumeBytesDirect(request, consumer);
      }
      try {
        jetty.start(); // as the high-level path does: the sessions run on its HTTP/2 client
      } catch (Exception e) {
        throw KubernetesClientException.launderThrowable(e);
      }
      return streams.send(request, consumer, () -> super.consumeBytesDirect(request, consumer));
    }

    /** Requests that take HTTP/2 streams wait here for a session: their gate is asked when their stream starts. */
    @Override
    public boolean gates(io.fabric8.kubernetes.client.http.HttpRequest request) {
      return request instanceof StandardHttpRequest standard && streams.accepts(standard);
    }

    @Override
    public void doClose() {
      streams.close();
      super.doClose();
    }

  }
}
