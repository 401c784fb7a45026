package dev.nodelet.launcher;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Dictionary;
import java.util.HashMap;
import java.util.Hashtable;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.felix.framework.Felix;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.Constants;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.launch.Framework;

/**
 * The Felix framework with the bundles of {@code bundles/}, following the launch API sequence: init, install,
 * start, wait for stop. Nodelet's own API classes are not on the launcher's class path, so the few calls into the
 * framework's services (Config Admin here; Health Checks, the client and the managers in {@link Readiness},
 * {@link ComponentReports} and {@link ManagerObjects}) go through the interfaces loaded from their bundles.
 */
final class NodeletFramework {

  /**
   * Whether the framework is ready; else what is missing, one part per {@code "; "}.
   *
   * @param services the required services there are, and the node's UID once known
   */
  /** The Gogo shell's bundle: its console, and an idle executor thread it keeps even without a console. */
  static final String GOGO_SHELL = "org.apache.felix.gogo.shell";
  static final String SPIFLY = "org.apache.aries.spifly.dynamic.bundle";

  record Status(boolean ready, String missing, long activeBundles, List<String> services) {
  }

  private final Path bundlesDir;
  private final Path deployDir;
  private final boolean shell;
  private final Framework framework;
  private final GogoSessions gogo = new GogoSessions();
  /** Shared by readiness and the reports: it remembers since when a component waits. */
  private final ComponentHealth health = new ComponentHealth(TimeUnit.SECONDS.toNanos(10));
  private final Readiness readiness = new Readiness(this::context, health, this::started);
  private final ComponentReports reports = new ComponentReports(this::context, health);

  /**
   * @param launcherPids the PIDs the launcher configures itself; FileInstall leaves their files in {@code etcDir}
   *     to {@link EtcOverrides}
   */
  NodeletFramework(Path bundlesDir, Path etcDir, Path deployDir, Path storage, boolean shell,
      Collection<String> launcherPids) {
    this.bundlesDir = bundlesDir;
    this.deployDir = deployDir;
    this.shell = shell;
    Map<String, Object> config = new HashMap<>();
    config.put(Constants.FRAMEWORK_STORAGE, storage.toAbsolutePath().toString());
    config.put(Constants.FRAMEWORK_STORAGE_CLEAN, Constants.FRAMEWORK_STORAGE_CLEAN_ONFIRSTINIT);
    config.put("felix.fileinstall.dir", etcDir.toAbsolutePath().toString());
    config.put("felix.fileinstall.poll", "1000");
    config.put("felix.fileinstall.noInitialDelay", "true");
    // the launcher's own settings must not be written back into the user's etc/ files
    config.put("felix.fileinstall.enableConfigSave", "false");
    // FileInstall scans its folder every poll anyway; its NIO.2 scanner adds a JDK watch thread per folder
    config.put("felix.fileinstall.disableNio2", "true");
    config.put("felix.fileinstall.filter", EtcOverrides.fileInstallFilter(launcherPids));
    // by default Felix lets JDK code (ServiceLoader) asking a bundle class loader fall through to the launcher's
    // class path: bundles must see only their wiring
    config.put("felix.bootdelegation.implicit", "false");
    // JDK-internal packages that libraries reach without importing them: Netty's epoll transport (unix sockets of
    // external DRA drivers) loads sun.nio.ch and jdk.jfr classes from its JNI code, which fails with "unsupported
    // JNI version" when the bundle class loader cannot delegate them to the boot class path
    config.put(Constants.FRAMEWORK_BOOTDELEGATION, "sun.nio.ch,jdk.jfr,jdk.jfr.*");
    // the resolver runs on the thread that asks: a pool (one thread per core) would do little for a few dozen
    // bundles resolved once, and keep its threads for a minute
    config.put("felix.resolver.parallelism", "1");
    // the OSGi log service keeps records from INFO on (its default is WARN): the node's API serves them as pod logs
    config.put("org.osgi.service.log.admin.loglevel", "INFO");
    config.put("gosh.args", shell ? "" : "--nointeractive");
    config.put("gosh.home", storage.toAbsolutePath().toString());
    this.framework = new Felix(config);
  }

  /** The folder of the bundles, next to the launcher jar (or to target/classes when run from an IDE). */
  static Path bundlesDir() {
    try {
      Path self = Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      return self.getParent().resolve("bundles");
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName().toLowerCase(Locale.ROOT);
    } catch (IOException e) {
      return "localhost";
    }
  }

  /**
   * Starts the framework and the bundles; Nodelet's own bundles start last, after {@code configuration} and
   * {@code factoryConfiguration} (keyed {@code factoryPid~name}) are in Config Admin, so their components activate
   * once, with it. {@code out} says when a jar of the deploy folder replaces a built-in bundle.
   */
  void start(Map<String, Map<String, Object>> configuration, Map<String, Map<String, Object>> factoryConfiguration,
      PrintStream out) throws Exception {
    List<Path> jars;
    try (Stream<Path> files = Files.list(bundlesDir)) {
      jars = files.filter(p -> p.toString().endsWith(".jar")).sorted().collect(Collectors.toList());
    } catch (IOException e) {
      throw new IOException("no bundles folder at " + bundlesDir + " (build with: mvn -B -DskipTests package)", e);
    }
    if (jars.isEmpty()) {
      throw new IOException("no bundles in " + bundlesDir);
    }
    // fabric8 and SLF4J find their providers with ServiceLoader through the context class loader: the framework's
    // threads get the platform loader, which holds none, so that each bundle finds its own
    Thread current = Thread.currentThread();
    ClassLoader previous = current.getContextClassLoader();
    current.setContextClassLoader(ClassLoader.getPlatformClassLoader());
    try {
      framework.init();
      BundleContext context = framework.getBundleContext();
      List<Bundle> installed = new ArrayList<>();
      for (Path jar : jars) {
        installed.add(context.installBundle(BuiltInBundles.location(jar)));
      }
      framework.start();
      context.addBundleListener(new BuiltInBundles(jars, deployDir, this::context, out, this::started));
      gogo.register(context);
      installed.sort(Comparator.comparingInt(NodeletFramework::startOrder));
      boolean configured = false;
      for (Bundle bundle : installed) {
        if (!configured && startOrder(bundle) == 2) {
          for (Map.Entry<String, Map<String, Object>> pid : configuration.entrySet()) {
            configure(pid.getKey(), pid.getValue());
          }
          for (Map.Entry<String, Map<String, Object>> pid : factoryConfiguration.entrySet()) {
            configure(pid.getKey(), pid.getValue());
          }
          // hot deploy: a second FileInstall watcher on deploy/, for bundles (and configuration files)
          configure("org.apache.felix.fileinstall~deploy", Map.of(
              "felix.fileinstall.dir", deployDir.toAbsolutePath().toString(),
              "felix.fileinstall.poll", "1000", "felix.fileinstall.noInitialDelay", "true",
              "felix.fileinstall.enableConfigSave", "false", "felix.fileinstall.disableNio2", "true"));
          configured = true;
        }
        if (bundle.getHeaders().get(Constants.FRAGMENT_HOST) == null && started(bundle)) {
          bundle.start();
        }
        // the logging configuration as soon as Config Admin can take it: the bundles after it log in its format
        if ("org.apache.felix.configadmin".equals(bundle.getSymbolicName())
            && configuration.containsKey(LauncherLogging.PID)) {
          configure(LauncherLogging.PID, configuration.get(LauncherLogging.PID));
        }
      }
    } finally {
      current.setContextClassLoader(previous);
    }
  }

  /**
   * Whether the launcher starts this bundle: all but the Gogo shell's without a console (the command channel needs
   * only the Gogo runtime and the commands' bundles), and but SPI Fly. fabric8's bundles require SPI Fly's extender
   * to resolve, so it is installed, but started it weaves every class those bundles load (about 950, an ASM pass
   * each) and has fabric8's model bundles load and register every Kubernetes kind as a service (about 450 classes,
   * 1,000 services), for ServiceLoader lookups Nodelet never makes: it gives fabric8 its HTTP client and the type of
   * everything it decodes.
   */
  boolean started(Bundle bundle) {
    String name = bundle.getSymbolicName();
    return (shell || !GOGO_SHELL.equals(name)) && !SPIFLY.equals(name);
  }

  // logging first, so that no bundle logs before its backend is there; Nodelet's bundles last
  private static int startOrder(Bundle bundle) {
    String name = bundle.getSymbolicName();
    if (name.startsWith("org.ops4j.pax.logging")) {
      return 0;
    }
    return name.startsWith("nodelet-") ? 2 : 1;
  }

  /** Sets the configuration of a PID, or of a named factory configuration {@code factoryPid~name}. */
  void configure(String pid, Map<String, Object> properties) throws Exception {
    BundleContext context = framework.getBundleContext();
    ServiceReference<?> ref = await(() -> Optional.ofNullable(
        reference(context, "org.osgi.service.cm.ConfigurationAdmin")), Duration.ofSeconds(30))
        .orElseThrow(() -> new IllegalStateException("Config Admin did not start"));
    Object admin = context.getService(ref);
    try {
      Class<?> adminType = ref.getBundle().loadClass("org.osgi.service.cm.ConfigurationAdmin");
      Class<?> configurationType = ref.getBundle().loadClass("org.osgi.service.cm.Configuration");
      int tilde = pid.indexOf('~');
      Object configuration = tilde < 0
          ? adminType.getMethod("getConfiguration", String.class, String.class).invoke(admin, pid, "?")
          : adminType.getMethod("getFactoryConfiguration", String.class, String.class, String.class)
              .invoke(admin, pid.substring(0, tilde), pid.substring(tilde + 1), "?");
      Dictionary<String, Object> dictionary = new Hashtable<>(properties);
      configurationType.getMethod("update", Dictionary.class).invoke(configuration, dictionary);
    } finally {
      context.ungetService(ref);
    }
  }

  /**
   * Prints each component problem once (SCR failed activation; a reference unsatisfied for longer than 10 s; a
   * manager's strategy.target matching nothing), and a line when it is over; called every second by the launcher.
   */
  void reportComponents(PrintStream err) {
    reports.report(err);
  }

  /** Services whose absence is by design (see {@link ComponentHealth#expectMissing}). */
  void expectMissing(Set<String> interfaces) {
    health.expectMissing(interfaces);
  }

  GogoSessions gogo() {
    return gogo;
  }

  BundleContext context() {
    return framework.getBundleContext();
  }

  /** Whether the framework runs (it may be stopping). */
  boolean running() {
    return (framework.getState() & Bundle.ACTIVE) != 0;
  }

  /**
   * Whether every bundle is active, the required services are registered, NodeIdentity serves this node with its UID
   * (which proves the client reached the API server) and the readiness checks pass: the node's pods listed and
   * handed to the managers, and their objects synced; else what is missing.
   *
   * @param probe whether to ask the API server for the node while it is missing (at most every 2 s)
   */
  Status status(String nodeName, boolean probe) {
    return readiness.status(nodeName, probe);
  }

  /**
   * A service by interface name, whatever class space it lives in: the launcher asks for the bundles' services by
   * name, without their classes, and must get them however the framework judges its view of those classes.
   */
  static ServiceReference<?> reference(BundleContext context, String name) {
    try {
      ServiceReference<?>[] refs = context.getAllServiceReferences(name, null);
      return refs == null ? null : refs[0];
    } catch (org.osgi.framework.InvalidSyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  void waitForStop() throws InterruptedException {
    framework.waitForStop(0);
  }

  /** Stops the framework and waits for it; safe to call more than once. */
  void stop() {
    gogo.close();
    try {
      if ((framework.getState() & (Bundle.STARTING | Bundle.ACTIVE)) != 0) {
        framework.stop();
      }
      framework.waitForStop(30_000);
    } catch (BundleException e) {
      System.err.println("nodelet: error while stopping: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static <T> Optional<T> await(java.util.function.Supplier<Optional<T>> check, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    Optional<T> value = check.get();
    while (value.isEmpty() && System.nanoTime() < deadline) {
      sleep(50);
      value = check.get();
    }
    return value;
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  static void deleteRecursively(File dir) {
    File[] children = dir.listFiles();
    if (children != null) {
      for (File child : children) {
        deleteRecursively(child);
      }
    }
    dir.delete();
  }
}
