package dev.nodelet.launcher;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import sun.misc.Signal;

/**
 * Starts Nodelet: Felix with SCR, Config Admin, metatype, FileInstall on {@code etc/}, the Gogo shell and every
 * Nodelet bundle. With a kubeconfig (option or {@code KUBECONFIG}) it serves that cluster, with {@code --in-cluster}
 * the cluster of the pod it runs in; otherwise it starts the embedded Kubernetes API server on loopback, seeded with
 * a demo node, and serves that.
 */
public final class Main {

  static final String READY = "Nodelet ready";
  static final String HTTP_BUFFER_PROPERTY = "jdk.httpclient.bufsize";
  static final List<String> QUIET_LOGGERS = List.of("io.fabric8.kubernetes.client.informers",
      "io.fabric8.kubernetes.client.dsl.internal");

  private static final java.util.logging.Logger SPIFLY_LOG =
      java.util.logging.Logger.getLogger("org.apache.aries.spifly");

  private Main() {
  }

  public static void main(String[] args) {
    PrintStream out = System.out;
    Options options;
    try {
      options = Options.parse(args, System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println("nodelet: " + e.getMessage());
      System.err.println(Options.USAGE);
      System.exit(2);
      return;
    }
    if (options.help()) {
      out.println(Options.USAGE);
      return;
    }
    if (options.exec() != null) {
      System.exit(CommandChannel.exec(options.runDir(), options.exec(), out, System.err));
      return;
    }
    // The JDK HTTP client gives every connection a read buffer of this size (16 KiB by default, read once per JVM);
    // with http2.enabled=false the watch strategy holds one such connection per watched object, and 4 KiB saves a
    // third of its heap per object (docs/benchmarks.md, measure 2)
    if (System.getProperty(HTTP_BUFFER_PROPERTY) == null) {
      System.setProperty(HTTP_BUFFER_PROPERTY, "4096");
    }
    // pax-logging's own messages (and log4j2's status logger) at DEBUG unless told otherwise
    System.getProperties().putIfAbsent("org.ops4j.pax.logging.DefaultServiceLog.level", "ERROR");
    // SPI Fly reports every provider it registers at INFO; keep the console for what matters
    SPIFLY_LOG.setLevel(java.util.logging.Level.WARNING);
    // fabric8's informers and watch managers log every failed attempt with its stack trace (hundreds of lines a
    // minute while the API server is unreachable); Nodelet's components say it once, with the URL, per backoff step
    // (the embedded API server logs through the launcher's own class path; the bundles through pax-logging, whose
    // configuration the launcher sets)
    for (String logger : QUIET_LOGGERS) {
      System.getProperties().putIfAbsent("org.slf4j.simpleLogger.log." + logger, "error");
    }
    // Bundles find ServiceLoader providers through the context class loader: it must never be the launcher's
    // class path, which holds fabric8 and SLF4J for the embedded API server
    Thread.currentThread().setContextClassLoader(ClassLoader.getPlatformClassLoader());
    // with JSON logs, the launcher's own lines are JSON too: those before pax-logging starts and beside it
    PrintStream console = options.jsonLogs() ? JsonLines.printStream(out, "INFO") : out;
    PrintStream errors = options.jsonLogs() ? JsonLines.printStream(System.err, "ERROR") : System.err;
    if (options.jsonLogs()) {
      JsonLines.routeJavaLogging(System.err);
    }
    System.exit(run(options, console, errors));
  }

  static int run(Options options, PrintStream out, PrintStream err) {
    EmbeddedApiServer server = null;
    NodeletFramework framework = null;
    ScheduledExecutorService monitor = null;
    CommandChannel channel = null;
    CountDownLatch stopRequested = new CountDownLatch(1);
    try {
      // refused before the API server and the framework start, whose start and stop take long on a busy machine
      CommandChannel.checkRunFolder(options.runDir());
      Map<String, Object> kube = new LinkedHashMap<>();
      Map<String, Map<String, Object>> configuration = new LinkedHashMap<>();
      configuration.put("dev.nodelet.kube", kube);
      Path registry = null;
      String where;
      if (options.inCluster()) {
        // nodelet-kube's automatic configuration: the pod's service account token, which fabric8 reads again
        // when it refreshes, so a rotated token is picked up
        where = "the cluster of this pod (service account)";
      } else if (options.kubeconfig() == null) {
        // HTTPS with HTTP/2 as a cluster serves it; Nodelet reads the kubeconfig that kubectl uses, CA and token
        server = EmbeddedApiServer.builder().tls().port(options.apiPort()).build().start();
        Path kubeconfig = server.writeKubeconfig(options.workDir().resolve("kubeconfig"));
        DemoCluster.seed(server, options.nodeName());
        kube.put("kubeconfig.path", kubeconfig.toAbsolutePath().toString());
        // external DRA drivers register their sockets here; private to this user, as nodelet-dra-grpc requires
        registry = Files.createDirectories(options.workDir().toAbsolutePath().resolve("plugins_registry"),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        configuration.put("dev.nodelet.dra.grpc", Map.of("registration.folder", registry.toString()));
        where = server.url() + " (embedded)";
        out.println("Embedded Kubernetes API server listening on " + server.url()
            + " (kubeconfig: " + kubeconfig + ")");
      } else {
        kube.put("kubeconfig.path", options.kubeconfig().toString());
        if (options.context() != null) {
          kube.put("context", options.context());
        }
        where = "the cluster of " + options.kubeconfig();
      }
      kube.put("node.name", options.nodeName());
      configuration.put(LauncherLogging.PID, LauncherLogging.configuration(options.jsonLogs(), QUIET_LOGGERS));
      if (options.healthPort() >= 0) {
        configuration.put("dev.nodelet.health", Map.of("port", options.healthPort(),
            "address", options.healthAddress()));
      }
      // Felix Health Checks' executor keeps every thread it starts (25 by default); Nodelet's few checks need 2
      configuration.put("org.apache.felix.hc.core.impl.executor.HealthCheckExecutorThreadPool",
          Map.of("threadPoolSize", 2));
      if (options.metrics().isPresent()) {
        configuration.put(Metrics.PID, options.metrics().get().configuration());
      }
      // the checkpoint of prepared DRA claims survives a restart with the same work directory
      configuration.put("dev.nodelet.dra.claims", Map.of("state.directory",
          options.workDir().resolve("dra").toString()));
      // node mode: this Nodelet registers its Node and renews its Lease (always on the demo cluster)
      if (server != null) {
        // the demo's node API on a free port, which the Node reports; the embedded API server's kubelet client
        // certificate is its client CA, so that kubectl logs goes through
        int kubeletPort = freePort();
        Path clientCa = Files.writeString(options.workDir().resolve("apiserver-kubelet-client-ca.pem"),
            server.kubeletClientCaPem());
        configuration.put("dev.nodelet.node", Map.of("enabled", true, "kubelet.port", kubeletPort));
        configuration.put("dev.nodelet.node.api", Map.of("port", kubeletPort,
            "client.ca.file", clientCa.toAbsolutePath().toString()));
      } else {
        configuration.put("dev.nodelet.node", Map.of("enabled", options.nodeMode()));
      }

      framework = new NodeletFramework(options.bundlesDir(), options.etcDir(), options.deployDir(),
          options.workDir().resolve("felix"), options.shell(), configuration.keySet());
      NodeletFramework stopping = framework;
      // etc/<pid>.cfg of a PID the launcher configures overrides single keys of the launcher's values
      EtcOverrides overrides = new EtcOverrides(options.etcDir(), configuration, framework::configure, out);
      configuration = overrides.initial();
      // SIGTERM stops the framework; the JVM then ends normally with 0 instead of 143. Ctrl-C interrupts the
      // command that runs in the shell, if one does (nodelet:watch), and otherwise stops Nodelet too
      Signal.handle(new Signal("INT"), s -> {
        if (!stopping.gogo().interruptConsoleCommand()) {
          stopRequested.countDown();
        }
      });
      Signal.handle(new Signal("TERM"), s -> stopRequested.countDown());
      Thread stopper = new Thread(() -> {
        try {
          stopRequested.await();
          stopping.stop();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, "nodelet-stop");
      stopper.setDaemon(true);
      stopper.start();
      // on the demo cluster, the example DRA driver reports a few devices of this node
      Map<String, Map<String, Object>> factories = server == null ? Map.of()
          : Map.of(DemoCluster.DRIVER_PID + "~demo", DemoCluster.driverConfiguration());
      framework.start(configuration, factories);
      monitor = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "nodelet-launcher-monitor");
        thread.setDaemon(true);
        return thread;
      });
      monitor.scheduleWithFixedDelay(() -> {
        overrides.poll();
        stopping.reportComponents(err);
      }, 1, 1, TimeUnit.SECONDS);
      channel = CommandChannel.open(options.runDir(), framework.context(), framework.gogo());
      NodeletFramework.Status status = framework.awaitReady(Duration.ofSeconds(options.readyTimeoutSeconds()),
          options.nodeName(), out);
      if (stopRequested.getCount() == 0) {
        return 0;
      }
      if (!status.ready()) {
        err.println("nodelet: not ready after " + options.readyTimeoutSeconds() + " s: " + status.missing());
        return 1;
      }
      out.println(READY + ": node " + options.nodeName() + " on " + where);
      if (options.healthPort() >= 0) {
        out.println("  health: http://" + options.healthAddress() + ":" + options.healthPort()
            + "/readyz?verbose, /livez, /system/health, /receipts");
      }
      out.println("  bundles: " + status.activeBundles() + " active; services: " + String.join(", ",
          status.services()));
      if (server != null) {
        out.println("  " + DemoCluster.summary(server, options.nodeName()));
        for (String line : framework.cachedObjects(DemoCluster.REFERENCED_OBJECTS, Duration.ofSeconds(10))) {
          out.println("  cache: " + line);
        }
        out.println("  " + DemoCluster.awaitSlices(server, options.nodeName(),
            Duration.ofSeconds(options.readyTimeoutSeconds())));
      }
      options.metrics().ifPresent(m -> out.println("  metrics: " + (m.port() == 0
          ? "a free port on " + m.address() + " (the log names it)"
          : "http://" + m.address() + ":" + m.port() + "/metrics")));
      if (registry != null) {
        out.println("  external DRA drivers register their sockets in " + registry);
      }
      out.println("  configuration: " + options.etcDir().toAbsolutePath() + "; hot deploy: "
          + options.deployDir().toAbsolutePath() + "; commands: java -jar nodelet-launcher.jar --run "
          + options.runDir().toAbsolutePath() + " --exec 'nodelet:objects'; stop with "
          + (options.shell() ? "Ctrl-C outside a command, or 'stop 0'" : "Ctrl-C"));

      framework.waitForStop();
      out.println("Nodelet stopped");
      return 0;
    } catch (Exception e) {
      err.println("nodelet: cannot start: " + describe(e));
      return 1;
    } finally {
      if (monitor != null) {
        monitor.shutdownNow();
      }
      if (channel != null) {
        channel.close();
      }
      if (framework != null) {
        framework.stop();
      }
      if (server != null) {
        server.close();
      }
      if (options.temporaryWorkDir()) {
        NodeletFramework.deleteRecursively(options.workDir().toFile());
      }
    }
  }

  /** A port free now, for the demo's node API (the Node must name the port before the API listens on it). */
  private static int freePort() throws IOException {
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /**
   * The metrics endpoint the command line asks for.
   *
   * @param port the port, 0 for a free one
   * @param address the IP address to listen on
   */
  record Metrics(int port, String address) {
    static final String LOOPBACK = "127.0.0.1";
    static final String PID = "dev.nodelet.metrics";

    Map<String, Object> configuration() {
      return Map.of("port", port, "address", address);
    }
  }

  /** The command line; see {@link #USAGE}. */
  /** The message, and the root cause when it says more (fabric8's "An error has occurred." names nothing). */
  static String describe(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (" + root + ")";
  }

  record Options(Path kubeconfig, boolean inCluster, String context, String nodeName, Path etcDir, Path workDir,
      boolean temporaryWorkDir, Path bundlesDir, int apiPort, boolean shell, int readyTimeoutSeconds,
      boolean help, Path deployDir, Path runDir, String exec, Optional<Metrics> metrics, int healthPort,
      String healthAddress, boolean jsonLogs, boolean nodeMode) {

    /** A node's name is a DNS subdomain (RFC 1123), as the API server requires. */
    private static final Pattern NODE_NAME =
        Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    static final String USAGE = String.join("\n",
        "usage: java -jar nodelet-launcher.jar [options]",
        "  --kubeconfig PATH   serve the cluster of this kubeconfig (default: $KUBECONFIG; without either, the",
        "                      embedded Kubernetes API server with a demo node)",
        "  --in-cluster        serve the cluster this pod runs in, with the pod's service account",
        "  --context NAME      kubeconfig context (default: the current one)",
        "  --node NAME         this node's name (default: $NODE_NAME, else nodelet-demo on the embedded server,",
        "                      else the host name)",
        "  --etc DIR           configuration folder watched by FileInstall (default: etc)",
        "  --deploy DIR        hot deploy folder: bundles copied here start, removed ones stop (default: deploy",
        "                      next to the --etc folder)",
        "  --run DIR           folder of the local command socket nodelet.sock, mode 0600 (default: run next",
        "                      to the --etc folder)",
        "  --exec 'COMMAND'    run one shell command in the Nodelet serving --run (e.g. 'nodelet:objects'),",
        "                      print its output and exit with its status",
        "  --work DIR          framework cache and generated files (default: a fresh temporary folder)",
        "  --api-port N        port of the embedded API server (default: a free one)",
        "  --health-port N     serve /livez, /readyz, /system/health and /receipts on this port (default: off)",
        "  --health-address A  address of --health-port (default: 127.0.0.1; 0.0.0.0 for a kubelet's probes)",
        "  --log-format F      text (default) or json: one JSON object per log line on standard error",
        "  --metrics-port N    serve Prometheus metrics at http://ADDRESS:N/metrics (default: no metrics endpoint;",
        "                      0 takes a free port)",
        "  --metrics-address A the address of the metrics endpoint (default: 127.0.0.1, this node only;",
        "                      0.0.0.0 for every interface)",
        "  --node-mode         be a Kubernetes node of its own, on a machine without a kubelet: register the Node,",
        "                      renew its Lease, report its status (always on with the embedded API server)",
        "  --shell             start the Gogo shell on standard input even when it is not a terminal",
        "  --no-shell          do not start the Gogo shell (the default when standard input is not a terminal)",
        "  --help              this text");

    static Options parse(String[] args, Map<String, String> env) {
      Path kubeconfig = blankToNull(env.get("KUBECONFIG")) == null ? null : Path.of(env.get("KUBECONFIG"));
      boolean inCluster = false;
      String context = null;
      String node = blankToNull(env.get("NODE_NAME"));
      Path etc = Path.of("etc");
      Path work = null;
      int port = 0;
      boolean shell = System.console() != null;
      boolean help = false;
      Path deploy = null;
      Path run = null;
      String exec = null;
      int healthPort = -1;
      String healthAddress = "127.0.0.1";
      boolean jsonLogs = false;
      int metricsPort = -1;
      String metricsAddress = null;
      boolean nodeMode = false;
      for (int i = 0; i < args.length; i++) {
        String arg = args[i];
        switch (arg) {
          case "--kubeconfig" -> kubeconfig = Path.of(value(args, ++i, arg));
          case "--in-cluster" -> inCluster = true;
          case "--context" -> context = value(args, ++i, arg);
          case "--node" -> node = value(args, ++i, arg);
          case "--etc" -> etc = Path.of(value(args, ++i, arg));
          case "--work" -> work = Path.of(value(args, ++i, arg));
          case "--api-port" -> port = port(value(args, ++i, arg), arg);
          case "--metrics-port" -> metricsPort = port(value(args, ++i, arg), arg);
          case "--metrics-address" -> metricsAddress = address(value(args, ++i, arg), arg);
          case "--node-mode" -> nodeMode = true;
          case "--no-shell" -> shell = false;
          case "--shell" -> shell = true;
          case "--deploy" -> deploy = Path.of(value(args, ++i, arg));
          case "--run" -> run = Path.of(value(args, ++i, arg));
          case "--exec" -> exec = value(args, ++i, arg);
          case "--health-port" -> healthPort = port(value(args, ++i, arg), arg);
          case "--health-address" -> healthAddress = address(value(args, ++i, arg), arg);
          case "--log-format" -> jsonLogs = logFormat(value(args, ++i, arg));
          case "--help", "-h" -> help = true;
          default -> throw new IllegalArgumentException("unknown option: " + arg);
        }
      }
      // fabric8's automatic configuration would prefer a kubeconfig to the service account
      if (inCluster && kubeconfig != null) {
        throw new IllegalArgumentException(
            "--in-cluster cannot be used with a kubeconfig (--kubeconfig or KUBECONFIG)");
      }
      if (kubeconfig != null && !Files.isReadable(kubeconfig)) {
        throw new IllegalArgumentException("kubeconfig not readable: " + kubeconfig);
      }
      if (node == null) {
        node = kubeconfig == null && !inCluster ? "nodelet-demo" : NodeletFramework.hostName();
      }
      if (node.length() > 253 || !NODE_NAME.matcher(node).matches()) {
        throw new IllegalArgumentException("node name " + node + " is not a valid Kubernetes node name: lower case"
            + " letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters"
            + " (--node or NODE_NAME)");
      }
      if (metricsAddress != null && metricsPort < 0) {
        throw new IllegalArgumentException("--metrics-address needs --metrics-port: the endpoint runs only on a port"
            + " given");
      }
      if (healthPort == 0) {
        throw new IllegalArgumentException("--health-port must be 1..65535 (probes need a fixed port), was 0");
      }
      Optional<Metrics> metrics = metricsPort < 0 ? Optional.empty()
          : Optional.of(new Metrics(metricsPort, metricsAddress == null ? Metrics.LOOPBACK : metricsAddress));
      Path base = etc.toAbsolutePath().getParent();
      deploy = deploy != null ? deploy : base.resolve("deploy");
      run = run != null ? run : base.resolve("run");
      if (exec != null) {
        return new Options(kubeconfig, inCluster, context, node, etc, work, false, null, port, false, 0, help,
            deploy, run, exec, metrics, healthPort, healthAddress, jsonLogs, nodeMode);
      }
      boolean temporary = work == null;
      try {
        if (temporary) {
          work = Files.createTempDirectory("nodelet-");
        }
        for (Path folder : List.of(etc, deploy)) {
          try {
            Files.createDirectories(folder);
          } catch (java.io.IOException e) {
            throw new IllegalArgumentException("cannot create " + folder + " (" + e + "); choose another one with "
                + (folder == etc ? "--etc" : "--deploy"));
          }
        }
      } catch (java.io.IOException e) {
        throw new IllegalArgumentException("cannot create a work folder: " + e.getMessage());
      }
      return new Options(kubeconfig, inCluster, context, node, etc, work, temporary, NodeletFramework.bundlesDir(),
          port, shell, 60, help, deploy, run, null, metrics, healthPort, healthAddress, jsonLogs, nodeMode);
    }

    private static String value(String[] args, int i, String option) {
      if (i >= args.length || args[i].startsWith("--")) {
        throw new IllegalArgumentException(option + " needs a value");
      }
      return args[i];
    }

    private static int port(String value, String option) {
      try {
        int p = Integer.parseInt(value);
        if (p < 0 || p > 65535) {
          throw new NumberFormatException();
        }
        return p;
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(option + " must be a port number (0..65535), was " + value);
      }
    }

    private static String address(String value, String option) {
      try {
        return InetAddress.getByName(value).getHostAddress();
      } catch (UnknownHostException e) {
        throw new IllegalArgumentException(option + " must be an IP address or a known host name of this machine,"
            + " e.g. 127.0.0.1 or 0.0.0.0; was " + value);
      }
    }

    private static boolean logFormat(String value) {
      return switch (value) {
        case "text" -> false;
        case "json" -> true;
        default -> throw new IllegalArgumentException("--log-format must be text or json, was " + value);
      };
    }

    private static String blankToNull(String s) {
      return s == null || s.isBlank() ? null : s;
    }
  }
}
