package dev.nodelet.benchmarks;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.Verb;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The embedded API server in a child JVM, so that the heap and threads of the measuring JVM are the client's alone.
 * It serves HTTPS with HTTP/2 (ALPN, {@value EmbeddedApiServer#MAX_CONCURRENT_STREAMS} streams per connection, HTTP/1.1
 * as the fallback), as a kube-apiserver does; clients reach it through the kubeconfig it writes (its CA and admin
 * token, readable by this user only).
 *
 * <p>{@link #main} starts the server, prints its kubeconfig's path and then answers one line per command line on its
 * standard input (observations of the server, stop and start keeping its state, sampling every 100 ms) until that
 * input closes.
 */
final class ApiServerProcess implements AutoCloseable {

  /** The resource the benchmarks watch. */
  static final String RESOURCE = "configmaps";

  /** The sampling window of {@link #startSampling()}. */
  static final int SAMPLE_MILLIS = 100;

  /** What the server has seen so far: its open connections and watches, and requests per verb on {@link #RESOURCE}. */
  record Stats(int connections, int watches, Map<Verb, Long> requests) {

    long requests(Verb verb) {
      return requests.getOrDefault(verb, 0L);
    }

    /** Reads (GET, LIST, WATCH) on {@link #RESOURCE}. */
    long reads() {
      return requests(Verb.GET) + requests(Verb.LIST) + requests(Verb.WATCH);
    }
  }

  /**
   * What {@link #startSampling()} to {@link #stopSampling()} saw, every {@value #SAMPLE_MILLIS} ms.
   *
   * @param maxWatches the most watches on {@link #RESOURCE} open at once
   * @param maxConnections the most connections open at once
   * @param watchRequests WATCH requests on {@link #RESOURCE} that arrived in each window, in order
   * @param listRequests LIST requests on {@link #RESOURCE} that arrived in each window, in order
   */
  record Samples(int maxWatches, int maxConnections, long[] watchRequests, long[] listRequests) {
  }

  private final Process process;
  private final BufferedReader answers;
  private final Writer commands;
  private final Path kubeconfig;
  private final String url;

  private ApiServerProcess(Process process, BufferedReader answers, String url, Path kubeconfig) {
    this.process = process;
    this.url = url;
    this.answers = answers;
    this.commands = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    this.kubeconfig = kubeconfig;
  }

  static ApiServerProcess start() {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> command = new ArrayList<>(List.of(java, "-Xmx2g", "-cp", System.getProperty("java.class.path"),
        ApiServerProcess.class.getName()));
    try {
      Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8));
      String url = null;
      String line;
      while ((line = out.readLine()) != null) {
        if (line.startsWith("URL ")) {
          url = line.substring("URL ".length()).trim();
        } else if (line.startsWith("KUBECONFIG ") && url != null) {
          return new ApiServerProcess(process, out, url, Path.of(line.substring("KUBECONFIG ".length()).trim()));
        }
      }
      process.destroyForcibly();
      throw new IllegalStateException("the API server process ended without a kubeconfig; see its output above");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The server's HTTPS URL. */
  String url() {
    return url;
  }

  /** The kubeconfig of the server: its HTTPS URL, its CA and an admin token. */
  Path kubeconfig() {
    return kubeconfig;
  }

  Stats stats() {
    Map<String, String> fields = fields(ask("stats"));
    Map<Verb, Long> requests = new LinkedHashMap<>();
    for (Verb verb : Verb.values()) {
      requests.put(verb, Long.parseLong(fields.get(verb.name())));
    }
    return new Stats(Integer.parseInt(fields.get("connections")), Integer.parseInt(fields.get("watches")),
        requests);
  }

  /** Requests per protocol (ALPN name: {@code h2}, {@code http/1.1}) since the server started. */
  Map<String, Long> requestsByProtocol() {
    Map<String, Long> protocols = new LinkedHashMap<>();
    fields(ask("protocols")).forEach((k, v) -> protocols.put(k, Long.parseLong(v)));
    return protocols;
  }

  /** Stops the server: connections refused, every watch ended; objects and resourceVersions kept. */
  void stopServer() {
    ask("stop");
  }

  /** Starts the stopped server again on the same port. */
  void startServer() {
    ask("start");
  }

  void startSampling() {
    ask("sample");
  }

  Samples stopSampling() {
    Map<String, String> fields = fields(ask("unsample"));
    return new Samples(Integer.parseInt(fields.get("maxWatches")), Integer.parseInt(fields.get("maxConnections")),
        longs(fields.get("watch")), longs(fields.get("list")));
  }

  private static long[] longs(String csv) {
    return csv.isEmpty() ? new long[0] : Arrays.stream(csv.split(",")).mapToLong(Long::parseLong).toArray();
  }

  private static Map<String, String> fields(String answer) {
    Map<String, String> fields = new LinkedHashMap<>();
    for (String field : answer.trim().split(" +")) {
      int eq = field.indexOf('=');
      if (eq > 0) {
        fields.put(field.substring(0, eq), field.substring(eq + 1));
      }
    }
    return fields;
  }

  private synchronized String ask(String command) {
    try {
      commands.write(command + "\n");
      commands.flush();
      String line;
      while ((line = answers.readLine()) != null) {
        if (line.startsWith("OK ")) {
          return line.substring(3);
        }
        if (line.startsWith("ERROR ")) {
          throw new IllegalStateException("the API server process could not " + command + ": " + line.substring(6));
        }
      }
      throw new IllegalStateException("the API server process ended while asked to " + command);
    } catch (IOException e) {
      throw new UncheckedIOException("the API server process did not answer " + command, e);
    }
  }

  @Override
  public void close() {
    try {
      process.getOutputStream().close();
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (IOException e) {
      process.destroyForcibly();
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    try {
      Files.deleteIfExists(kubeconfig);
    } catch (IOException e) {
      Main.log("cannot delete %s: %s", kubeconfig, e);
    }
  }

  public static void main(String[] args) throws IOException {
    PrintStream out = System.out;
    Path kubeconfig = Files.createTempFile("nodelet-benchmarks-", ".kubeconfig");
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().tls().build().start()) {
      server.writeKubeconfig(kubeconfig);
      out.println("URL " + server.url());
      out.println("KUBECONFIG " + kubeconfig);
      out.flush();
      serve(server, new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)), out);
    } finally {
      Files.deleteIfExists(kubeconfig);
    }
  }

  /** Answers commands until the input closes. */
  private static void serve(EmbeddedApiServer server, BufferedReader in, PrintStream out) throws IOException {
    Sampler sampler = null;
    for (String line; (line = in.readLine()) != null; ) {
      String answer;
      try {
        switch (line.trim()) {
          case "stats" -> {
            StringBuilder s = new StringBuilder("connections=" + server.openConnections() + " watches="
                + server.openWatches(RESOURCE));
            for (Verb verb : Verb.values()) {
              s.append(' ').append(verb.name()).append('=').append(server.requestCount(verb, RESOURCE));
            }
            answer = s.toString();
          }
          case "protocols" -> {
            StringBuilder s = new StringBuilder();
            server.requestsByProtocol().forEach((k, v) -> s.append(k).append('=').append(v).append(' '));
            answer = s.toString();
          }
          case "stop" -> {
            stop(server);
            answer = "stopped";
          }
          case "start" -> {
            server.start();
            answer = "started";
          }
          case "sample" -> {
            if (sampler != null) {
              sampler.stop();
            }
            sampler = new Sampler(server);
            answer = "sampling";
          }
          case "unsample" -> {
            if (sampler == null) {
              throw new IllegalStateException("not sampling: send sample first");
            }
            answer = sampler.stop();
            sampler = null;
          }
          default -> throw new IllegalArgumentException("unknown command '" + line
              + "'; use stats, protocols, stop, start, sample or unsample");
        }
        out.println("OK " + answer);
      } catch (RuntimeException e) {
        out.println("ERROR " + e);
      }
      out.flush();
    }
    if (sampler != null) {
      sampler.stop();
    }
  }

  /**
   * Stops the server, waiting longer than the server's own 10 s for each step: ending 5,000 watches on a loaded
   * machine can take more. A step that timed out is asked again, which waits for the same close.
   */
  private static void stop(EmbeddedApiServer server) {
    for (int attempt = 1; ; attempt++) {
      try {
        server.stop();
        return;
      } catch (IllegalStateException e) {
        if (attempt == 6 || !(e.getCause() instanceof TimeoutException)) {
          throw e;
        }
      }
    }
  }

  /** Reads the server's counters every {@value #SAMPLE_MILLIS} ms on a timer of its own. */
  private static final class Sampler {
    private final EmbeddedApiServer server;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final List<Long> watches = new ArrayList<>();
    private final List<Long> lists = new ArrayList<>();
    private final long started = System.nanoTime();
    private int maxWatches;
    private int maxConnections;
    private long lastWatch;
    private long lastList;

    Sampler(EmbeddedApiServer server) {
      this.server = server;
      this.lastWatch = server.requestCount(Verb.WATCH, RESOURCE);
      this.lastList = server.requestCount(Verb.LIST, RESOURCE);
      timer.scheduleAtFixedRate(this::sample, SAMPLE_MILLIS, SAMPLE_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * Adds what arrived since the last sample to the window of this JVM's clock that the sample falls in: a timer
     * that runs late (a busy machine, a collection) and then catches up must not turn one late window into several
     * short ones, which would count more arrivals per window than came.
     */
    private synchronized void sample() {
      long watch = server.requestCount(Verb.WATCH, RESOURCE);
      long list = server.requestCount(Verb.LIST, RESOURCE);
      long windowNanos = TimeUnit.MILLISECONDS.toNanos(SAMPLE_MILLIS);
      int window = (int) Math.max(0, (System.nanoTime() - started - 1) / windowNanos);
      while (watches.size() <= window) {
        watches.add(0L);
        lists.add(0L);
      }
      watches.set(window, watches.get(window) + watch - lastWatch);
      lists.set(window, lists.get(window) + list - lastList);
      lastWatch = watch;
      lastList = list;
      maxWatches = Math.max(maxWatches, server.openWatches(RESOURCE));
      maxConnections = Math.max(maxConnections, server.openConnections());
    }

    String stop() {
      timer.shutdownNow();
      try {
        timer.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      synchronized (this) {
        sample();
        return "maxWatches=" + maxWatches + " maxConnections=" + maxConnections + " watch="
            + join(watches) + " list=" + join(lists);
      }
    }

    private static String join(List<Long> values) {
      StringBuilder s = new StringBuilder();
      for (Long v : values) {
        s.append(s.length() == 0 ? "" : ",").append(v);
      }
      return s.toString();
    }
  }
}
