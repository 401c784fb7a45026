package dev.nodelet.node.api.internal;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;

/**
 * The HTTPS server of the node's API: {@code /healthz} and {@code /containerLogs/<namespace>/<pod>/<container>}, the
 * paths of the kubelet's server that the API server reaches for {@code kubectl logs}.
 */
final class NodeApiServer implements AutoCloseable {

  static final String THREAD_PREFIX = "nodelet-nodeapi-";
  private static final int THREADS = 16;
  /** How often a follower without new lines checks that it should go on. */
  private static final long FOLLOW_WAKE_MILLIS = 1000;

  private final HttpsServer http;
  private final ThreadPoolExecutor executor;
  private final ContainerLogs logs;
  private final Callers callers;
  private final Clock clock;

  private NodeApiServer(HttpsServer http, ThreadPoolExecutor executor, ContainerLogs logs, Callers callers,
      Clock clock) {
    this.http = http;
    this.executor = executor;
    this.logs = logs;
    this.callers = callers;
    this.clock = clock;
  }

  /**
   * @throws UncheckedIOException when the address cannot be bound
   */
  static NodeApiServer start(InetSocketAddress address, Certificates.Identity identity,
      List<X509Certificate> clientCas, Callers callers, ContainerLogs logs, Clock clock) {
    SSLContext tls = tls(identity, clientCas);
    AtomicInteger threads = new AtomicInteger();
    ThreadPoolExecutor executor = new ThreadPoolExecutor(THREADS, THREADS, 30, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), r -> {
          Thread thread = new Thread(r, THREAD_PREFIX + threads.incrementAndGet());
          thread.setDaemon(true);
          return thread;
        });
    executor.allowCoreThreadTimeOut(true);
    HttpsServer http;
    try {
      http = HttpsServer.create(address, 50);
    } catch (IOException e) {
      executor.shutdownNow();
      throw new UncheckedIOException("cannot listen on " + address.getAddress().getHostAddress() + ":"
          + address.getPort() + " for the node's API: " + e.getMessage(), e);
    }
    http.setHttpsConfigurator(new HttpsConfigurator(tls) {
      @Override
      public void configure(HttpsParameters params) {
        SSLParameters parameters = tls.getDefaultSSLParameters();
        // a client certificate is asked for, not required: a caller may bring a bearer token instead
        parameters.setWantClientAuth(!clientCas.isEmpty());
        params.setSSLParameters(parameters);
      }
    });
    http.setExecutor(executor);
    NodeApiServer server = new NodeApiServer(http, executor, logs, callers, clock);
    http.createContext("/healthz", server::healthz);
    http.createContext("/containerLogs/", server::containerLogs);
    http.start();
    return server;
  }

  private static SSLContext tls(Certificates.Identity identity, List<X509Certificate> clientCas) {
    try {
      char[] password = "node-api".toCharArray(); // an in-memory store only
      KeyStore keys = KeyStore.getInstance("PKCS12");
      keys.load(null, null);
      keys.setKeyEntry("serving", identity.key(), password, identity.chain().toArray(Certificate[]::new));
      KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keyManagers.init(keys, password);
      TrustManagerFactory trustManagers = null;
      if (!clientCas.isEmpty()) {
        KeyStore trusted = KeyStore.getInstance("PKCS12");
        trusted.load(null, null);
        for (int i = 0; i < clientCas.size(); i++) {
          trusted.setCertificateEntry("client-ca-" + i, clientCas.get(i));
        }
        trustManagers = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trustManagers.init(trusted);
      }
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(keyManagers.getKeyManagers(), trustManagers == null ? null : trustManagers.getTrustManagers(),
          null);
      return context;
    } catch (GeneralSecurityException | IOException e) {
      throw new IllegalArgumentException("cannot use the serving certificate: " + e.getMessage(), e);
    }
  }

  int port() {
    return http.getAddress().getPort();
  }

  private void healthz(HttpExchange exchange) throws IOException {
    try (exchange) {
      send(exchange, 200, "ok");
    }
  }

  private void containerLogs(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (!"GET".equals(exchange.getRequestMethod())) {
        send(exchange, 405, "only GET is served on " + exchange.getRequestURI().getPath());
        return;
      }
      Optional<String> user = callers.user((HttpsExchange) exchange);
      if (user.isEmpty()) {
        send(exchange, 401, "Unauthorized");
        return;
      }
      if (!callers.authorized(user.get())) {
        send(exchange, 403, "Forbidden (user=" + user.get() + ", verb=get, resource=nodes, subresource=log)");
        return;
      }
      String[] parts = exchange.getRequestURI().getRawPath().substring("/containerLogs/".length()).split("/", -1);
      if (parts.length != 3 || parts[0].isEmpty() || parts[1].isEmpty() || parts[2].isEmpty()) {
        send(exchange, 400, "the path must be /containerLogs/<namespace>/<pod>/<container>");
        return;
      }
      String namespace = decode(parts[0]);
      String pod = decode(parts[1]);
      String container = decode(parts[2]);
      LogQuery query;
      try {
        query = LogQuery.parse(exchange.getRequestURI().getRawQuery(), clock);
      } catch (IllegalArgumentException e) {
        send(exchange, 400, e.getMessage());
        return;
      }
      Optional<ContainerLog> log = logs.log(namespace, pod, container);
      if (log.isEmpty()) {
        send(exchange, 404, "container \"" + container + "\" in pod \"" + namespace + "/" + pod
            + "\" is not found on this node");
        return;
      }
      if (query.previous()) {
        // a bundle restarted in place writes on in the same log: no terminated instance keeps its own
        send(exchange, 400, "previous terminated container \"" + container + "\" in pod \"" + pod
            + "\" not found");
        return;
      }
      stream(exchange, log.get(), query);
    }
  }

  /** Writes the selected lines, then, when following, every new one until the client or the container goes. */
  private void stream(HttpExchange exchange, ContainerLog log, LogQuery query) throws IOException {
    exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    exchange.sendResponseHeaders(200, 0);
    OutputStream out = exchange.getResponseBody();
    long budget = query.limitBytes() < 0 ? Long.MAX_VALUE : query.limitBytes();
    List<LogLine> lines = query.select(log.lines());
    long last = -1;
    for (LogLine line : lines) {
      budget = write(out, query.render(line), budget);
      last = line.sequence();
    }
    if (lines.isEmpty() && !log.lines().isEmpty()) {
      last = log.lines().get(log.lines().size() - 1).sequence(); // tailLines=0: only what comes next
    }
    out.flush();
    try {
      while (query.follow() && budget > 0) {
        List<LogLine> newer = log.after(last, FOLLOW_WAKE_MILLIS);
        if (newer == null) {
          return; // the container's bundles are gone, or the node's API stops
        }
        for (LogLine line : newer) {
          budget = write(out, query.render(line), budget);
          last = line.sequence();
        }
        out.flush(); // fails once the client has gone, which ends the follow
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static long write(OutputStream out, String text, long budget) throws IOException {
    if (budget <= 0) {
      return 0;
    }
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    int length = (int) Math.min(bytes.length, budget);
    out.write(bytes, 0, length);
    return budget - length;
  }

  private static String decode(String part) {
    return URLDecoder.decode(part, StandardCharsets.UTF_8);
  }

  private static void send(HttpExchange exchange, int status, String text) throws IOException {
    byte[] body = (text + "\n").getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    exchange.sendResponseHeaders(status, body.length);
    exchange.getResponseBody().write(body);
  }

  @Override
  public void close() {
    http.stop(0);
    executor.shutdownNow();
    try {
      executor.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
