package dev.nodelet.launcher;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
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
    if (options.version()) {
      out.println(Options.versionLine());
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
    // (the embedded API server logs through SLF4J's simple logger in lib/demo; the bundles through pax-logging, whose
    // configuration the launcher sets)
    for (String logger : QUIET_LOGGERS) {
      System.getProperties().putIfAbsent("org.slf4j.simpleLogger.log." + logger, "error");
    }
    // Bundles find ServiceLoader providers through the context class loader: it must never be the launcher's
    // class path, nor the demo's class loader, which holds fabric8 and SLF4J for the embedded API server
    Thread.currentThread().setContextClassLoader(ClassLoader.getPlatformClassLoader());
    // with JSON logs, the launcher's own lines are JSON too: those before pax-logging starts and beside it
    PrintStream console = options.jsonLogs() ? JsonLines.printStream(out, "INFO") : out;
    PrintStream errors = options.jsonLogs() ? JsonLines.printStream(System.err, "ERROR") : System.err;
    if (options.jsonLogs()) {
      JsonLines.routeJavaLogging(System.err);
    }
    System.exit(run(options, console, errors));
  }

  static int run(Options given, PrintStream out, PrintStream err) {
    Demo demo = null;
    ScheduledExecutorService monitor = null;
    CommandChannel channel = null;
    Options options = null;
    List<FolderLock> locks = new ArrayList<>();
    AtomicReference<NodeletFramework> started = new AtomicReference<>();
    CountDownLatch stopRequested = new CountDownLatch(1);
    // first of all, so that a stop while starting ends as any other, with a line and no temporary folder left: SIGTERM
    // stops the framework and the JVM then ends normally with 0 instead of 143. Ctrl-C interrupts the command that
    // runs in the shell, if one does (nodelet:watch), and otherwise stops Nodelet too
    // the framework stops on a thread of its own, started by the first request (no thread waits for one meanwhile)
    AtomicBoolean stopping = new AtomicBoolean();
    Runnable requestStop = () -> {
      stopRequested.countDown();
      if (stopping.compareAndSet(false, true)) {
        Thread stopper = new Thread(() -> {
          NodeletFramework running = started.get();
          if (running != null) {
            running.stop();
          }
        }, "nodelet-stop");
        stopper.setDaemon(true);
        stopper.start();
      }
    };
    Signal.handle(new Signal("INT"), s -> {
      NodeletFramework running = started.get();
      if (running == null || !running.gogo().interruptConsoleCommand()) {
        requestStop.run();
      }
    });
    Signal.handle(new Signal("TERM"), s -> requestStop.run());
    monitor = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread thread = new Thread(r, "nodelet-launcher-monitor");
      thread.setDaemon(true);
      return thread;
    });
    try {
      // refused before the API server and the framework start, whose start and stop take long on a busy machine
      CommandChannel.checkRunFolder(given.runDir());
      options = given.prepare();
      // a second launcher on the same folders must not touch the first one's kubeconfig or socket
      locks.add(FolderLock.acquire(options.workDir(), "work folder", "--work"));
      Files.createDirectories(options.runDir(), PosixFilePermissions.asFileAttribute(
          PosixFilePermissions.fromString("rwx------")));
      locks.add(FolderLock.acquire(options.runDir(), "run folder", "--run (or --etc)"));
      long startedAt = System.nanoTime();
      AtomicReference<String> phase = new AtomicReference<>(options.kubeconfig() == null && !options.inCluster()
          ? "starting the embedded API server" : "starting the framework");
      ScheduledFuture<?> progress = monitor.scheduleAtFixedRate(() -> out.println("Nodelet starting: "
          + startProgress(started.get(), phase.get()) + " ("
          + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startedAt) + " s)"), 10, 10, TimeUnit.SECONDS);
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
        // the demo, loaded from lib/demo now and only now; HTTPS with HTTP/2 as a cluster serves it, and Nodelet reads
        // the kubeconfig that kubectl uses, CA and token
        demo = DemoLoader.load(DemoLoader.folder());
        demo.start(options.apiPort());
        Path kubeconfig = demo.writeKubeconfig(options.workDir().resolve("kubeconfig"));
        demo.seed(options.nodeName());
        kube.put("kubeconfig.path", kubeconfig.toAbsolutePath().toString());
        // external DRA drivers register their sockets here; private to this user, as nodelet-dra-grpc requires
        registry = Files.createDirectories(options.workDir().toAbsolutePath().resolve("plugins_registry"),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        configuration.put("dev.nodelet.dra.grpc", Map.of("registration.folder", registry.toString()));
        where = demo.url() + " (embedded)";
        phase.set("starting the framework");
        out.println("Embedded Kubernetes API server listening on " + demo.url()
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
        configuration.put(Options.Metrics.PID, options.metrics().get().configuration());
      }
      // the checkpoint of prepared DRA claims survives a restart with the same work directory
      configuration.put("dev.nodelet.dra.claims", Map.of("state.directory",
          options.workDir().resolve("dra").toString()));
      // node mode: this Nodelet registers its Node and renews its Lease (always on the demo cluster)
      if (demo != null) {
        // the demo's node API on a free port, which the Node reports; the embedded API server's kubelet client
        // certificate is its client CA, so that kubectl logs goes through
        int kubeletPort = freePort();
        Path clientCa = Files.writeString(options.workDir().resolve("apiserver-kubelet-client-ca.pem"),
            demo.kubeletClientCaPem());
        configuration.put("dev.nodelet.node", Map.of("enabled", true, "kubelet.port", kubeletPort));
        configuration.put("dev.nodelet.node.api", Map.of("port", kubeletPort,
            "client.ca.file", clientCa.toAbsolutePath().toString()));
        // and its pods run as bundles, the example pod's from the demo's Maven repository next to the bundles
        Path demoRepository = options.bundlesDir().toAbsolutePath().getParent().resolve("demo-repository");
        configuration.put("dev.nodelet.pods", Files.isDirectory(demoRepository)
            ? Map.of("maven.local.repository", demoRepository.toString()) : Map.of());
      } else {
        configuration.put("dev.nodelet.node", Map.of("enabled", options.nodeMode()));
      }
      if (stopRequested.getCount() == 0) {
        return stopped(out);
      }

      NodeletFramework framework = new NodeletFramework(options.bundlesDir(), options.etcDir(), options.deployDir(),
          options.workDir().resolve("felix"), options.shell(), configuration.keySet());
      started.set(framework);
      // etc/<pid>.cfg of a PID the launcher configures overrides single keys of the launcher's values
      EtcOverrides overrides = new EtcOverrides(options.etcDir(), configuration, framework::configure, out);
      configuration = overrides.initial();
      // with node mode off nothing registers the node, and the node's API waits for it as designed
      if (!Boolean.parseBoolean(String.valueOf(configuration.getOrDefault("dev.nodelet.node", Map.of())
          .get("enabled")))) {
        framework.expectMissing(Set.of("dev.nodelet.node.RegisteredNode"));
      }
      // on the demo cluster, the example DRA driver reports a few devices of this node
      Map<String, Map<String, Object>> factories = demo == null ? Map.of() : demo.factoryConfiguration();
      if (stopRequested.getCount() == 0) {
        return stopped(out);
      }
      framework.start(configuration, factories, out);
      progress.cancel(false);
      monitor.scheduleWithFixedDelay(() -> {
        overrides.poll();
        framework.reportComponents(err);
      }, 1, 1, TimeUnit.SECONDS);
      channel = CommandChannel.open(options.runDir(), framework.context(), framework.gogo());
      NodeletFramework.Status status = new ReadyWait(options.readyTimeoutSeconds(), ReadyWait.SYSTEM, out)
          .await(readiness(framework, options.nodeName()));
      if (stopRequested.getCount() == 0) {
        return stopped(out);
      }
      if (!status.ready()) {
        err.println("nodelet: not ready after " + (options.readyTimeoutSeconds() == Options.DEFAULT_READY
            ? ReadyWait.DEFAULT_SECONDS : options.readyTimeoutSeconds()) + " s: " + status.missing()
            + " (--ready-timeout sets how long to wait, 0 without limit)");
        return 1;
      }
      out.println(READY + ": node " + options.nodeName() + " on " + where);
      if (options.healthPort() >= 0) {
        out.println("  health: http://" + options.healthAddress() + ":" + options.healthPort()
            + "/readyz?verbose, /livez, /system/health, /receipts");
      }
      out.println("  bundles: " + status.activeBundles() + " active; services: " + String.join(", ",
          status.services()));
      if (demo != null) {
        out.println("  " + demo.summary(options.nodeName()));
        for (String line : ManagerObjects.list(framework::context, demo.referencedObjects(),
            Duration.ofSeconds(10))) {
          out.println("  cache: " + line);
        }
        out.println("  " + demo.awaitSlices(options.nodeName(),
            Duration.ofSeconds(ReadyWait.DEFAULT_SECONDS)));
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
      if (stopRequested.getCount() == 0) {
        return stopped(out); // what failed failed because it was stopped
      }
      err.println("nodelet: cannot start: " + describe(e));
      return 1;
    } finally {
      monitor.shutdownNow();
      if (channel != null) {
        channel.close();
      }
      if (started.get() != null) {
        started.get().stop();
      }
      if (demo != null) {
        demo.close();
      }
      locks.forEach(FolderLock::close);
      if (options != null && options.temporaryWorkDir()) {
        NodeletFramework.deleteRecursively(options.workDir().toFile());
      }
    }
  }

  private static int stopped(PrintStream out) {
    out.println("Nodelet stopped before it was ready");
    return 0;
  }

  /** What the start waits for: the embedded API server, the framework, then its bundles. */
  private static String startProgress(NodeletFramework framework, String phase) {
    BundleContext context = framework == null ? null : framework.context();
    if (context == null) {
      return phase;
    }
    List<Bundle> bundles = Stream.of(context.getBundles())
        .filter(b -> b.getHeaders().get(Constants.FRAGMENT_HOST) == null && framework.started(b)).toList();
    return "starting the bundles, " + bundles.stream().filter(b -> b.getState() == Bundle.ACTIVE).count() + " of "
        + bundles.size() + " active";
  }

  private static ReadyWait.Target readiness(NodeletFramework framework, String nodeName) {
    return new ReadyWait.Target() {
      @Override
      public NodeletFramework.Status status(boolean probe) {
        return framework.status(nodeName, probe);
      }

      @Override
      public boolean running() {
        return framework.running();
      }

      @Override
      public boolean persistence() {
        return PersistenceSetting.on(framework.context());
      }
    };
  }

  /** A port free now, for the demo's node API (the Node must name the port before the API listens on it). */
  private static int freePort() throws IOException {
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /** The message, and the root cause when it says more (fabric8's "An error has occurred." names nothing). */
  static String describe(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (" + root + ")";
  }
}
