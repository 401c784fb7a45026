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
import java.util.Iterator;
import java.util.LinkedHashMap;
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
 * framework's services (Config Admin, NodeIdentity) go through the interfaces loaded from their bundles.
 */
final class NodeletFramework {

  static final List<String> REQUIRED_SERVICES = List.of(
      "io.fabric8.kubernetes.client.KubernetesClient", "dev.nodelet.kube.NodeIdentity",
      "dev.nodelet.objectcache.StoreStrategy", "dev.nodelet.objectcache.ConfigMapManager",
      "dev.nodelet.objectcache.SecretManager");

  private static final String STRATEGY = "dev.nodelet.objectcache.StoreStrategy";
  /** The Gogo shell's bundle: its console, and an idle executor thread it keeps even without a console. */
  static final String GOGO_SHELL = "org.apache.felix.gogo.shell";
  private static final List<String> MANAGER_PIDS = List.of("dev.nodelet.configmap", "dev.nodelet.secret");

  record Status(boolean ready, String missing, long activeBundles, List<String> services) {
  }

  private final Path bundlesDir;
  private final Path deployDir;
  private final boolean shell;
  private final Framework framework;
  private final GogoSessions gogo = new GogoSessions();
  private final ComponentHealth health = new ComponentHealth(TimeUnit.SECONDS.toNanos(10));
  /** Component problems already printed, by component name. */
  private final Map<String, String> reported = new HashMap<>();
  private long nextProbe;
  private String probed = "";

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
    // class path, where the embedded API server's SLF4J and fabric8 live: bundles must see only their wiring
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
    // fabric8 and SLF4J find their providers with ServiceLoader: a framework thread whose context class loader
    // sees the launcher's class path would load them from there instead
    Thread current = Thread.currentThread();
    ClassLoader previous = current.getContextClassLoader();
    current.setContextClassLoader(ClassLoader.getPlatformClassLoader());
    try {
      framework.init();
      BundleContext context = framework.getBundleContext();
      List<Bundle> installed = new ArrayList<>();
      for (Path jar : jars) {
        installed.add(context.installBundle(jar.toUri().toString()));
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
   * only the Gogo runtime and the commands' bundles).
   */
  private boolean started(Bundle bundle) {
    return shell || !GOGO_SHELL.equals(bundle.getSymbolicName());
  }

  // SPI Fly weaves ServiceLoader calls as classes load, so it starts first; Nodelet's bundles start last
  private static int startOrder(Bundle bundle) {
    String name = bundle.getSymbolicName();
    // logging first, so that no bundle logs before its backend is there
    if (name.startsWith("org.apache.aries.spifly") || name.startsWith("org.ops4j.pax.logging")) {
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
   * Prints each component problem once (SCR failed activation; a reference unsatisfied for longer than 10 s), and a
   * line when it is over; called every second by the launcher.
   */
  void reportComponents(PrintStream err) {
    BundleContext context = framework.getBundleContext();
    if (context == null) {
      return;
    }
    Map<String, String> problems = new LinkedHashMap<>(health.problems(context));
    problems.putAll(strategyProblems(context));
    synchronized (reported) {
      problems.forEach((component, problem) -> {
        if (!problem.equals(reported.put(component, problem))) {
          err.println("nodelet: " + problem);
        }
      });
      for (Iterator<String> it = reported.keySet().iterator(); it.hasNext(); ) {
        String component = it.next();
        if (!problems.containsKey(component)) {
          it.remove();
          err.println("nodelet: " + (component.endsWith("#strategy")
              ? component.substring(0, component.indexOf('#')) + ": strategy.target matches a strategy now"
              : "component " + component + " is no longer failing"));
        }
      }
    }
  }

  /**
   * A manager whose {@code strategy.target} matches no StoreStrategy service serves with its built-in get (and logs
   * that only at INFO); the launcher says it as an error, once, with the names there are.
   */
  private Map<String, String> strategyProblems(BundleContext context) {
    Map<String, String> problems = new LinkedHashMap<>();
    ServiceReference<?> ref = reference(context, "org.osgi.service.cm.ConfigurationAdmin");
    if (ref == null) {
      return problems;
    }
    Object admin = context.getService(ref);
    try {
      Class<?> adminType = ref.getBundle().loadClass("org.osgi.service.cm.ConfigurationAdmin");
      Class<?> configurationType = ref.getBundle().loadClass("org.osgi.service.cm.Configuration");
      for (String pid : MANAGER_PIDS) {
        Object[] configurations = (Object[]) adminType.getMethod("listConfigurations", String.class)
            .invoke(admin, "(service.pid=" + pid + ")");
        Dictionary<?, ?> properties = configurations == null || configurations.length == 0 ? null
            : (Dictionary<?, ?>) configurationType.getMethod("getProperties").invoke(configurations[0]);
        Object target = properties == null ? null : properties.get("strategy.target");
        if (target == null || target.toString().isBlank()) {
          continue;
        }
        ServiceReference<?>[] matching;
        try {
          matching = context.getAllServiceReferences(STRATEGY, target.toString());
        } catch (org.osgi.framework.InvalidSyntaxException e) {
          problems.put(pid + "#strategy", pid + ": strategy.target=" + target + " is not a valid filter ("
              + e.getMessage() + "); write it as (nodelet.strategy=NAME)");
          continue;
        }
        if (matching == null) {
          problems.put(pid + "#strategy", pid + ": strategy.target=" + target + " matches no strategy service"
              + " (there are: " + strategyNames(context) + "); the manager serves with its built-in get until"
              + " one matches. Fix strategy.target in the configuration of " + pid + " (etc/" + pid + ".cfg)");
        }
      }
    } catch (ReflectiveOperationException e) {
      problems.put("strategy", "cannot read the managers' configuration: " + e);
    } finally {
      context.ungetService(ref);
    }
    return problems;
  }

  private static String strategyNames(BundleContext context) {
    try {
      ServiceReference<?>[] refs = context.getAllServiceReferences(STRATEGY, null);
      return refs == null ? "none" : Stream.of(refs).map(r -> String.valueOf(r.getProperty("nodelet.strategy")))
          .sorted().collect(Collectors.joining(", "));
    } catch (org.osgi.framework.InvalidSyntaxException e) {
      throw new IllegalStateException(e);
    }
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
   */
  Status status(String nodeName, boolean probe) {
    BundleContext context = framework.getBundleContext();
    List<String> missing = new ArrayList<>();
    long active = 0;
    for (Bundle bundle : context.getBundles()) {
      boolean fragment = bundle.getHeaders().get(Constants.FRAGMENT_HOST) != null;
      if (bundle.getState() == Bundle.ACTIVE) {
        active++;
      } else if (!fragment && started(bundle)) {
        missing.add("bundle " + bundle.getSymbolicName() + " not active");
      }
    }
    List<String> services = new ArrayList<>();
    for (String service : REQUIRED_SERVICES) {
      if (reference(context, service) == null) {
        missing.add("no " + service + " service");
      } else {
        services.add(service.substring(service.lastIndexOf('.') + 1));
      }
    }
    Optional<?> uid = call("dev.nodelet.kube.NodeIdentity", "nodeName").filter(nodeName::equals)
        .flatMap(name -> call("dev.nodelet.kube.NodeIdentity", "nodeUid")).flatMap(o -> (Optional<?>) o);
    if (uid.isPresent()) {
      services.add("node UID " + uid.get());
    } else {
      missing.add(probe ? probeNode(nodeName) : "node " + nodeName + " not seen through the API server yet");
    }
    health.problems(context).values().forEach(missing::add);
    missing.addAll(failingHealthChecks(context));
    return new Status(missing.isEmpty(), String.join("; ", missing), active, services);
  }

  /**
   * The health checks of readiness (tag {@code nodelet}, as {@code /readyz}) that do not pass, one line each; the
   * launcher does not see the Felix Health Checks API, so it calls it by reflection.
   */
  private static List<String> failingHealthChecks(BundleContext context) {
    String api = "org.apache.felix.hc.api.";
    ServiceReference<?> ref = reference(context, api + "execution.HealthCheckExecutor");
    if (ref == null) {
      return List.of("no health check executor (bundle org.apache.felix.healthcheck.core)");
    }
    Object executor = context.getService(ref);
    if (executor == null) {
      return List.of("no health check executor (bundle org.apache.felix.healthcheck.core)");
    }
    List<String> failing = new ArrayList<>();
    try {
      Bundle bundle = ref.getBundle();
      Class<?> selectorType = bundle.loadClass(api + "execution.HealthCheckSelector");
      Class<?> resultType = bundle.loadClass(api + "execution.HealthCheckExecutionResult");
      Class<?> metadataType = bundle.loadClass(api + "execution.HealthCheckMetadata");
      Class<?> checkResultType = bundle.loadClass(api + "Result");
      Class<?> entryType = bundle.loadClass(api + "ResultLog$Entry");
      Class<?> optionsType = bundle.loadClass(api + "execution.HealthCheckExecutionOptions");
      Object selector = selectorType.getMethod("tags", String[].class).invoke(null, (Object) new String[] {"nodelet"});
      // results the executor cached (2 s) could predate the pods' registration
      Object options = optionsType.getMethod("setForceInstantExecution", boolean.class)
          .invoke(optionsType.getConstructor().newInstance(), true);
      List<?> results = (List<?>) bundle.loadClass(api + "execution.HealthCheckExecutor")
          .getMethod("execute", selectorType, optionsType).invoke(executor, selector, options);
      if (results.isEmpty()) {
        failing.add("no health check tagged nodelet yet");
      }
      for (Object result : results) {
        Object checkResult = resultType.getMethod("getHealthCheckResult").invoke(result);
        String status = String.valueOf(checkResultType.getMethod("getStatus").invoke(checkResult));
        if (status.equals("OK") || status.equals("WARN")) {
          continue;
        }
        Object metadata = resultType.getMethod("getHealthCheckMetadata").invoke(result);
        List<String> messages = new ArrayList<>();
        for (Object entry : (Iterable<?>) checkResult) {
          if (!(Boolean) entryType.getMethod("isDebug").invoke(entry)) {
            messages.add(String.valueOf(entryType.getMethod("getMessage").invoke(entry)));
          }
        }
        failing.add("health check " + metadataType.getMethod("getName").invoke(metadata) + ": " + status + " "
            + String.join("; ", messages));
      }
    } catch (ReflectiveOperationException | ClassCastException e) {
      failing.add("cannot run the health checks: " + e);
    } finally {
      context.ungetService(ref);
    }
    return failing;
  }

  /**
   * Why the node is not there: asks the API server for it through the bundles' KubernetesClient (at most every two
   * seconds), so that the line names the API server's URL and what it answered.
   */
  private String probeNode(String nodeName) {
    if (System.nanoTime() < nextProbe) {
      return probed;
    }
    nextProbe = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    BundleContext context = framework.getBundleContext();
    String service = "io.fabric8.kubernetes.client.KubernetesClient";
    ServiceReference<?> ref = reference(context, service);
    if (ref == null) {
      return probed = "no " + service + " service (see the configuration of dev.nodelet.kube)";
    }
    Object client = context.getService(ref);
    String url = "the API server";
    try {
      Bundle bundle = ref.getBundle();
      Class<?> type = bundle.loadClass(service);
      url = "the API server at " + type.getMethod("getMasterUrl").invoke(client);
      Object nodes = type.getMethod("nodes").invoke(client);
      // through fabric8's own bundle: the registering bundle need not import the dsl package
      ClassLoader fabric8 = type.getClassLoader();
      Object resource = fabric8.loadClass("io.fabric8.kubernetes.client.dsl.Nameable")
          .getMethod("withName", String.class).invoke(nodes, nodeName);
      Object node = fabric8.loadClass("io.fabric8.kubernetes.client.dsl.Gettable").getMethod("get").invoke(resource);
      probed = node == null
          ? "node " + nodeName + " does not exist on " + url + " (is --node the name of one of its nodes?)"
          : "node " + nodeName + " exists on " + url + "; NodeIdentity has not seen it yet";
    } catch (java.lang.reflect.InvocationTargetException e) {
      Throwable cause = e.getCause();
      while (cause.getCause() != null && cause.getCause() != cause) {
        cause = cause.getCause();
      }
      probed = url + " has not answered (" + cause.getClass().getSimpleName()
          + (cause.getMessage() == null ? "" : ": " + cause.getMessage()) + ")";
    } catch (ReflectiveOperationException | RuntimeException e) {
      probed = "cannot ask " + url + " for node " + nodeName + ": " + e;
    } finally {
      context.ungetService(ref);
    }
    return probed;
  }

  /** Calls a no-argument method of a service through its interface, as loaded by the registering bundle. */
  private Optional<Object> call(String service, String method) {
    BundleContext context = framework.getBundleContext();
    ServiceReference<?> ref = reference(context, service);
    if (ref == null) {
      return Optional.empty();
    }
    Object instance = context.getService(ref);
    try {
      return Optional.ofNullable(ref.getBundle().loadClass(service).getMethod(method).invoke(instance));
    } catch (ReflectiveOperationException e) {
      return Optional.empty();
    } finally {
      context.ungetService(ref);
    }
  }

  /**
   * What the object managers hold, one line per resource ("configmaps via watch: default/web-config (1 pod,
   * RUNNING), ..."), once they hold at least {@code expected} objects in all or the timeout passes.
   */
  List<String> cachedObjects(int expected, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    List<String> lines;
    int count;
    do {
      lines = new ArrayList<>();
      count = 0;
      BundleContext context = framework.getBundleContext();
      if (context == null) {
        break; // stopped meanwhile
      }
      ServiceReference<?>[] refs;
      try {
        refs = context.getAllServiceReferences("dev.nodelet.objectcache.ObjectManager", null);
      } catch (org.osgi.framework.InvalidSyntaxException e) {
        throw new IllegalStateException(e);
      }
      for (ServiceReference<?> ref : refs == null ? new ServiceReference<?>[0] : refs) {
        Object manager = context.getService(ref);
        try {
          Class<?> type = ref.getBundle().loadClass("dev.nodelet.objectcache.ObjectManager");
          List<?> objects = (List<?>) type.getMethod("objects").invoke(manager);
          List<String> described = new ArrayList<>();
          for (Object o : objects) {
            Class<?> record = o.getClass();
            Object state = ((Optional<?>) record.getMethod("state").invoke(o)).map(Object::toString).orElse("-");
            described.add(record.getMethod("namespace").invoke(o) + "/" + record.getMethod("name").invoke(o)
                + " (" + record.getMethod("references").invoke(o) + " pod(s), " + state + ")");
          }
          count += objects.size();
          lines.add(ref.getProperty("nodelet.resource") + " via " + type.getMethod("strategy").invoke(manager)
              + ": " + (described.isEmpty() ? "none" : String.join(", ", described)));
        } catch (ReflectiveOperationException e) {
          lines.add("cannot list " + ref.getProperty("nodelet.resource") + ": " + e);
        } finally {
          context.ungetService(ref);
        }
      }
      if (count >= expected) {
        break;
      }
      sleep(100);
    } while (System.nanoTime() < deadline);
    lines.sort(null);
    return lines;
  }

  /**
   * A service by interface name, whatever class space it lives in: the launcher's own class path holds fabric8 for
   * the embedded API server, so the framework would hide the bundles' KubernetesClient from a plain lookup.
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
