package dev.nodelet.health.internal;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.configuration.ServicePublisher;
import dev.nodelet.objectcache.ObjectManager;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.felix.hc.api.execution.HealthCheckExecutionOptions;
import org.apache.felix.hc.api.execution.HealthCheckExecutor;
import org.apache.felix.hc.api.execution.HealthCheckSelector;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The health endpoint of configuration {@value #PID}, on the JDK's HTTP server with one thread:
 * <ul>
 *   <li>{@code /livez} and {@code /readyz}: the checks tagged {@value #LIVE_TAG} and {@value #READY_TAG}, as the
 *       kube-apiserver answers them ({@code ok}, or a line per check with {@code ?verbose} and on failure; 503 on
 *       failure; JSON with {@code ?format=json});</li>
 *   <li>{@code /system/health}: every Nodelet check (or those with any of {@code ?tags=a,b}) as Felix Health
 *       Checks' JSON;</li>
 *   <li>{@code /receipts}: what every manager serves each registered pod ({@code ?namespace=} and {@code ?pod=}
 *       narrow it).</li>
 * </ul>
 * It exists only while its configuration does, and stopping it closes the socket and the thread. Its configuration
 * goes through {@link LastGoodConfiguration}: a new address or port moves it there in place; an invalid one is
 * refused naming the key and it keeps listening where it did; with an invalid first one it listens nowhere and holds
 * readiness until a valid one comes.
 */
@Component(configurationPid = HealthEndpoint.PID, configurationPolicy = ConfigurationPolicy.REQUIRE,
    service = {})
@Designate(ocd = HealthConfiguration.class)
public final class HealthEndpoint {

  public static final String PID = "dev.nodelet.health";
  /** The tag of the checks {@code /livez} runs: only what a restart would cure. */
  public static final String LIVE_TAG = "nodelet-live";
  /** The tag of the checks {@code /readyz} runs: every Nodelet check. */
  public static final String READY_TAG = "nodelet";

  private static final Logger LOG = LoggerFactory.getLogger(HealthEndpoint.class);

  private final HealthCheckExecutor executor;
  /** Replaced by SCR as managers come and go. */
  @Reference(name = "manager", service = ObjectManager.class, cardinality = ReferenceCardinality.MULTIPLE,
      policy = ReferencePolicy.DYNAMIC)
  private volatile List<ObjectManager<?>> managers = List.of();
  private final LastGoodConfiguration<HealthConfiguration, InetSocketAddress> configuration;
  private Server server; // guarded by this; null until a valid configuration came

  /** One listening HTTP server and its thread. */
  private record Server(HttpServer http, ExecutorService thread) {
    void close() {
      http.stop(0);
      thread.shutdownNow();
      try {
        thread.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * @throws UncheckedIOException if the address of a valid configuration cannot be listened on
   */
  @Activate
  public HealthEndpoint(BundleContext context, @Reference(name = "executor") HealthCheckExecutor executor,
      HealthConfiguration config, Map<String, Object> properties) {
    this(ServicePublisher.of(context), executor, config, properties);
  }

  /** For tests: where the health check of a waiting endpoint goes. */
  HealthEndpoint(ServicePublisher publisher, HealthCheckExecutor executor, HealthConfiguration config,
      Map<String, ?> properties) {
    this.executor = executor;
    this.configuration = LastGoodConfiguration.waiting(PID, "the health endpoint", HealthEndpoint::address,
        publisher);
    modified(config, properties);
  }

  /** @return the warnings given for keys its configuration does not have */
  List<String> unknownKeys() {
    return configuration.unknownKeys();
  }

  /** Moves to a valid new address, refuses an invalid one. */
  @Modified
  synchronized void modified(HealthConfiguration config, Map<String, ?> properties) {
    configuration.apply(config, properties, address -> {
      // the old port is given up first: a new address with the same port must be able to bind it
      if (server != null) {
        server.close();
        server = null;
      }
      server = listen(address);
    });
  }

  private Server listen(InetSocketAddress address) {
    HttpServer http;
    try {
      http = HttpServer.create(address, 16);
    } catch (IOException e) {
      throw new UncheckedIOException("health endpoint: cannot listen on " + address.getHostString() + ":"
          + address.getPort() + " (" + e.getMessage() + "); set port and address of " + PID
          + " to a free port on an address of this host", e);
    }
    ExecutorService thread = Executors.newSingleThreadExecutor(task -> {
      Thread t = new Thread(task, "nodelet-health-http");
      t.setDaemon(true);
      return t;
    });
    http.setExecutor(thread);
    http.createContext("/livez", exchange -> probe(exchange, "livez", LIVE_TAG));
    http.createContext("/readyz", exchange -> probe(exchange, "readyz", READY_TAG));
    http.createContext("/system/health", this::systemHealth);
    http.createContext("/receipts", this::receipts);
    http.createContext("/", exchange -> send(exchange, 404, "text/plain",
        "not found: " + exchange.getRequestURI().getPath() + " (try /livez, /readyz, /system/health or /receipts)\n"));
    http.start();
    LOG.info("Health endpoint listening on http://{}:{} ({})", address.getHostString(),
        http.getAddress().getPort(), PID);
    return new Server(http, thread);
  }

  /** @throws IllegalArgumentException naming the key that is wrong */
  static InetSocketAddress address(HealthConfiguration config) {
    if (config.port() < 0 || config.port() > 65535) {
      throw new IllegalArgumentException("port: must be between 0 and 65535 (0 for a free one), was "
          + config.port());
    }
    String host = config.address() == null || config.address().isBlank() ? "127.0.0.1" : config.address().trim();
    try {
      return new InetSocketAddress(InetAddress.getByName(host), config.port());
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("address: not an IP address or known host name: " + host, e);
    }
  }

  /** The port listened on. */
  synchronized int port() {
    if (server == null) {
      throw new IllegalStateException("the health endpoint waits for a valid configuration " + PID);
    }
    return server.http().getAddress().getPort();
  }

  @Deactivate
  synchronized void deactivate() {
    configuration.close();
    if (server != null) {
      server.close();
      server = null;
      LOG.info("Health endpoint stopped");
    }
  }

  private void probe(HttpExchange exchange, String endpoint, String tag) throws IOException {
    Map<String, String> query = query(exchange);
    HealthReport report = HealthReport.of(endpoint, executor.execute(HealthCheckSelector.tags(tag)));
    int status = report.healthy() ? 200 : 503;
    if (wantsJson(exchange, query)) {
      send(exchange, status, "application/json", report.json());
    } else {
      send(exchange, status, "text/plain; charset=utf-8", report.text(query.containsKey("verbose")));
    }
  }

  private void systemHealth(HttpExchange exchange) throws IOException {
    Map<String, String> query = query(exchange);
    String[] tags = Arrays.stream(query.getOrDefault("tags", "").split(",")).map(String::trim)
        .filter(t -> !t.isEmpty()).toArray(String[]::new);
    // an empty selector selects nothing: "every check" is every Nodelet tag; a check with any of the tags runs
    HealthReport report = HealthReport.of("health", executor.execute(
        HealthCheckSelector.tags(tags.length == 0 ? new String[] {READY_TAG, LIVE_TAG} : tags),
        new HealthCheckExecutionOptions().setCombineTagsWithOr(true)));
    int status = report.healthy() ? 200 : 503;
    if ("txt".equals(query.get("format"))) {
      send(exchange, status, "text/plain; charset=utf-8", report.text(true));
    } else {
      send(exchange, status, "application/json", report.json());
    }
  }

  private void receipts(HttpExchange exchange) throws IOException {
    Map<String, String> query = query(exchange);
    List<ObjectManager<?>> ordered = new ArrayList<>(managers);
    ordered.sort(Comparator.comparing(m -> m.type().plural()));
    send(exchange, 200, "application/json", ReceiptsJson.of(ordered, Optional.ofNullable(query.get("namespace")),
        Optional.ofNullable(query.get("pod"))));
  }

  private static boolean wantsJson(HttpExchange exchange, Map<String, String> query) {
    if (query.containsKey("format")) {
      return "json".equals(query.get("format"));
    }
    String accept = exchange.getRequestHeaders().getFirst("Accept");
    return accept != null && accept.contains("application/json");
  }

  private static Map<String, String> query(HttpExchange exchange) {
    Map<String, String> query = new HashMap<>();
    String raw = exchange.getRequestURI().getRawQuery();
    if (raw == null) {
      return query;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
      query.put(key, eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
    }
    return query;
  }

  private static void send(HttpExchange exchange, int status, String type, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    boolean head = "HEAD".equals(exchange.getRequestMethod());
    exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      if (!head) {
        out.write(bytes);
      }
    }
  }
}
