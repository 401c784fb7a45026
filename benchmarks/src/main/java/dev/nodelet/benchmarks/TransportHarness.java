package dev.nodelet.benchmarks;

import dev.nodelet.kube.KubeClients;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.jetty.JettyHttpClientFactory;
import io.fabric8.kubernetes.client.okhttp.OkHttpClientFactory;
import io.fabric8.kubernetes.client.vertx.VertxHttpClientFactory;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Measure 10, the transport: for each HTTP client fabric8 offers (and the one {@code nodelet-kube} builds), N
 * streaming watches, one per ConfigMap ({@code fieldSelector=metadata.name=...}), read as the reflector reads them
 * ({@code HttpClient.consumeBytes}), against the embedded API server in a child JVM with its 100-stream limit per
 * HTTP/2 connection: over TLS (ALPN) and over plain HTTP. Per run: watches established, TCP connections the server
 * sees, live threads, heap per watch after full GCs, time to establish them all, and what closing the client leaves.
 */
final class TransportHarness {

  static final int MEASURE = 10;
  private static final long ESTABLISH_TIMEOUT_MS = 60_000;

  /** One client under test: a name and how to build its fabric8 {@code HttpClient} for a configuration. */
  record Candidate(String name, Function<Server, Closeable> client) {
  }

  /** A client and what closing it must also close (a {@code KubernetesClient} around the HTTP client). */
  record Closeable(HttpClient http, Runnable close) {
  }

  /** The figures of one run. */
  record Result(String client, String scheme, int watches, int established, int failed, int connections,
      int threads, double heapPerWatchKiB, long establishMs, int connectionsAfterClose, int threadsAfterClose,
      String protocols, String firstFailure) {
  }

  private TransportHarness() {
  }

  static List<Candidate> candidates() {
    return List.of(
        new Candidate("jdk", server -> plain(new JdkHttpClientFactory(), server.config())),
        new Candidate("vertx", server -> plain(new VertxHttpClientFactory(), server.config())),
        new Candidate("jetty", server -> plain(new JettyHttpClientFactory(), server.config())),
        new Candidate("okhttp", server -> plain(new OkHttpClientFactory(), server.config())),
        new Candidate("nodelet-kube", server -> {
          KubernetesClient client = KubeClients.builder().kubeconfig(server.kubeconfig).http2(true).build();
          return new Closeable(client.getHttpClient(), client::close);
        }));
  }

  private static Closeable plain(HttpClient.Factory factory, Config config) {
    HttpClient http = factory.newBuilder(config).build();
    return new Closeable(http, http::close);
  }

  static List<Row> run(boolean smoke) {
    List<Integer> counts = smoke ? List.of(20) : List.of(100, 5_000);
    List<Result> results = new ArrayList<>();
    int max = counts.get(counts.size() - 1);
    for (boolean tls : List.of(true, false)) {
      if (smoke) {
        // one server for every client: 20 watches flood nobody, and starting the server's JVM was most of the run
        try (Server server = Server.start(tls, max)) {
          for (Candidate candidate : candidates()) {
            measure(server, candidate, counts, smoke, results);
          }
        }
        continue;
      }
      for (Candidate candidate : candidates()) {
        // a server of its own: a client that floods it (the JDK's opens a connection per request until its first
        // one is up) must not slow down the next
        try (Server server = Server.start(tls, max)) {
          measure(server, candidate, counts, smoke, results);
        }
      }
    }
    Main.log("transport table:%n%s", table(results));
    List<Row> rows = new ArrayList<>();
    for (Result r : results) {
      rows.add(new Row(MEASURE, "transport " + r.client() + " over " + r.scheme() + ", " + r.watches() + " watches",
          String.format(Locale.ROOT, "%d established (%d failed), %d connections, %d threads, %.1f KiB/watch, "
              + "%d ms; after close %d connections, %d threads; %s", r.established(), r.failed(), r.connections(),
              r.threads(), r.heapPerWatchKiB(), r.establishMs(), r.connectionsAfterClose(), r.threadsAfterClose(),
              r.protocols()),
          "—", "all established, ≤ ceil(N/100)+2 connections, threads independent of N, 0 left after close",
          Row.verdict(r.established() == r.watches() && r.connections() <= (r.watches() + 99) / 100 + 2
              && r.connectionsAfterClose() == 0 && r.threadsAfterClose() <= 0)));
    }
    return rows;
  }

  static String table(List<Result> results) {
    StringBuilder table = new StringBuilder();
    table.append("| client | scheme | watches | established | connections | threads | heap/watch | establish "
        + "| after close: connections, threads | protocols seen by the server |\n");
    table.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (Result r : results) {
      table.append(String.format(Locale.ROOT, "| %s | %s | %d | %d%s | %d | %d | %.1f KiB | %d ms | %d, %d | %s |%n",
          r.client(), r.scheme(), r.watches(), r.established(),
          r.failed() > 0 ? " (" + r.failed() + " failed: " + r.firstFailure() + ")" : "", r.connections(),
          r.threads(), r.heapPerWatchKiB(), r.establishMs(), r.connectionsAfterClose(), r.threadsAfterClose(),
          r.protocols()));
    }
    return table.toString();
  }

  private static void measure(Server server, Candidate candidate, List<Integer> counts, boolean smoke,
      List<Result> results) {
    for (int count : counts) {
      Result result = measure(server, candidate, count, smoke);
      Main.log("%s", result);
      results.add(result);
    }
  }

  /**
   * @param smoke one full GC per heap figure, and 2 s, not 10 s, to look whether closing the client closed its
   *     connections and ended its threads (some never do: the JDK's client keeps its connections)
   */
  static Result measure(Server server, Candidate candidate, int count, boolean smoke) {
    int closeChecks = smoke ? 20 : 100;
    String scheme = server.tls ? "https (ALPN)" : "http";
    server.command("reset");
    FootprintHarness.usedHeap(smoke);
    int threadsBefore = FootprintHarness.liveThreads();
    // a client before may have left connections open (the JDK's never closes its own): only this one's count
    int connectionsBefore = server.number("connections");
    long heapBefore = FootprintHarness.usedHeap(smoke);
    Closeable client = candidate.client().apply(server);
    List<CompletableFuture<HttpResponse<AsyncBody>>> watches = new ArrayList<>(count);
    AtomicInteger established = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    StringBuilder firstFailure = new StringBuilder();
    long start = System.nanoTime();
    try {
      for (int i = 0; i < count; i++) {
        watches.add(watch(client.http(), server.url, Fixtures.name(i), established, failed, firstFailure));
      }
      long deadline = System.currentTimeMillis() + ESTABLISH_TIMEOUT_MS;
      while (established.get() + failed.get() < count && System.currentTimeMillis() < deadline) {
        FootprintHarness.sleep(10);
      }
      long establishMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      // the server holds the watch once it answered; give the last ones a moment to register
      FootprintHarness.sleep(500);
      int connections = server.number("connections") - connectionsBefore;
      int threads = FootprintHarness.liveThreads() - threadsBefore;
      long heap = FootprintHarness.usedHeap(smoke) - heapBefore;
      String protocols = server.command("protocols");

      watches.forEach(w -> w.thenAccept(response -> response.body().cancel()));
      client.close().run();
      int connectionsAfter = connections;
      int threadsAfter = threads;
      for (int i = 0; i < closeChecks && (connectionsAfter > 0 || threadsAfter > 0); i++) {
        FootprintHarness.sleep(100);
        connectionsAfter = server.number("connections") - connectionsBefore;
        threadsAfter = FootprintHarness.liveThreads() - threadsBefore;
      }
      if (threadsAfter > 0) {
        Main.log("%s left threads: %s", candidate.name(), FootprintHarness.threadNames());
      }
      return new Result(candidate.name(), scheme, count, established.get(), failed.get(), connections, threads,
          heap / 1024.0 / count, establishMs, connectionsAfter, threadsAfter, protocols,
          firstFailure.toString());
    } catch (RuntimeException e) {
      client.close().run();
      throw e;
    }
  }

  /** One watch read as the reflector reads it: bytes consumed as they come, more asked for each time. */
  private static CompletableFuture<HttpResponse<AsyncBody>> watch(HttpClient http, String url, String name,
      AtomicInteger established, AtomicInteger failed, StringBuilder firstFailure) {
    var request = http.newHttpRequestBuilder().uri(url + "/api/v1/namespaces/default/configmaps?watch=true"
        + "&allowWatchBookmarks=true&timeoutSeconds=3600&fieldSelector=metadata.name%3D" + name)
        .header("Accept", "application/json").build();
    return http.consumeBytes(request, (buffers, body) -> body.consume()).whenComplete((response, failure) -> {
      if (failure == null && response.code() == 200) {
        established.incrementAndGet();
        response.body().consume();
      } else {
        synchronized (firstFailure) {
          if (firstFailure.length() == 0) {
            firstFailure.append(failure != null ? rootCause(failure) : "HTTP " + response.code());
          }
        }
        failed.incrementAndGet();
      }
    });
  }

  private static String rootCause(Throwable failure) {
    Throwable cause = failure;
    while (cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause.getClass().getSimpleName() + ": " + cause.getMessage();
  }

  /** The embedded API server in a child JVM, answering one-line commands on its standard input. */
  static final class Server implements AutoCloseable {
    final boolean tls;
    final String url;
    final String ca;
    final String kubeconfig;
    private final Process process;
    private final BufferedReader out;
    private final PrintWriter in;

    private Server(boolean tls, Process process) throws IOException {
      this.tls = tls;
      this.process = process;
      this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      this.in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
      this.url = expect("URL ");
      String caLine = expect("CA ");
      this.ca = caLine.isEmpty() ? null : caLine;
      this.kubeconfig = expect("KUBECONFIG ");
    }

    /** A configuration for this server as the plain candidates get it: its CA, no retries. */
    Config config() {
      return new ConfigBuilder(Config.empty()).withMasterUrl(url).withNamespace("default")
          .withRequestRetryBackoffLimit(0).withCaCertData(ca).withConnectionTimeout(30_000)
          .withRequestTimeout(30_000).build();
    }

    static Server start(boolean tls, int objects) {
      String java = ProcessHandle.current().info().command().orElse("java");
      List<String> command = List.of(java, "-Xmx3g", "-cp", System.getProperty("java.class.path"),
          TransportHarness.class.getName(), tls ? "tls" : "plain", Integer.toString(objects));
      try {
        return new Server(tls, new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    private String expect(String prefix) throws IOException {
      String line;
      while ((line = out.readLine()) != null) {
        if (line.startsWith(prefix)) {
          return line.substring(prefix.length()).trim();
        }
      }
      process.destroyForcibly();
      throw new IllegalStateException("the API server process ended before printing " + prefix.trim());
    }

    synchronized String command(String command) {
      in.println(command);
      try {
        return expect("= ");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    int number(String command) {
      return Integer.parseInt(command(command));
    }

    @Override
    public void close() {
      in.close();
      try {
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The child JVM: {@code tls|plain objects}; prints URL and CA, then answers commands until its input ends. */
  public static void main(String[] args) throws IOException {
    EmbeddedApiServer.Builder builder = EmbeddedApiServer.builder();
    if ("tls".equals(args[0])) {
      builder.tls();
    }
    try (EmbeddedApiServer server = builder.build().start(); KubernetesClient client = server.newClient()) {
      Fixtures.createConfigMaps(client, 0, Integer.parseInt(args[1]));
      System.out.println("URL " + server.url());
      System.out.println("CA " + (server.isTls() ? Base64.getEncoder().encodeToString(
          server.caCertificatePem().getBytes(StandardCharsets.US_ASCII)) : ""));
      Path kubeconfig = Files.createTempFile("nodelet-transport-", ".kubeconfig");
      kubeconfig.toFile().deleteOnExit();
      System.out.println("KUBECONFIG " + server.writeKubeconfig(kubeconfig));
      System.out.flush();
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      long[] protocolsBefore = {0, 0};
      String line;
      while ((line = in.readLine()) != null) {
        var protocols = server.requestsByProtocol();
        long h1 = protocols.getOrDefault("http/1.1", 0L);
        long h2 = protocols.getOrDefault("h2", 0L);
        String answer = switch (line.trim()) {
          case "connections" -> Integer.toString(server.openConnections());
          case "protocols" -> "h2 " + (h2 - protocolsBefore[1]) + ", http/1.1 " + (h1 - protocolsBefore[0]);
          case "reset" -> {
            protocolsBefore[0] = h1;
            protocolsBefore[1] = h2;
            yield "ok";
          }
          default -> "unknown command " + line;
        };
        System.out.println("= " + answer);
        System.out.flush();
      }
    }
  }
}
