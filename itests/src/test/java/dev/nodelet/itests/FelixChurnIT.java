package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;

import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.DraStatus;
import dev.nodelet.dra.DriverStatus;
import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.RegisteredPod;
import dev.nodelet.objectcache.StoreStrategy;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.lang.ref.WeakReference;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Hashtable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.awaitility.core.ConditionFactory;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.ExamFactory;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.forked.ForkedTestContainerFactory;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleException;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.wiring.BundleWiring;
import org.osgi.framework.wiring.FrameworkWiring;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.runtime.ServiceComponentRuntime;
import org.osgi.service.component.runtime.dto.ComponentConfigurationDTO;
import org.osgi.service.component.runtime.dto.ComponentDescriptionDTO;

/**
 * Bundle churn: each store strategy bundle, the example DRA driver and {@code nodelet-dra-grpc} (with the
 * example external driver as a real child process) is stopped and started, then uninstalled and installed again from
 * its location, {@value #DEFAULT_CYCLES} times each by default (system property {@value #CYCLES_PROPERTY}). After
 * every start the test waits until the bundle's components are active again and in use (the managers on the
 * strategy, the controller monitoring the driver). Afterwards the live threads, the open sockets and other file
 * descriptors of the framework's JVM and the open watches on the API server are back to what they were before,
 * every revision uninstalled is garbage collected, and nothing registered is lost: the managers still keep every pod
 * and serve every object it references (with the watch strategy, a change on the server reaches the get), and the
 * drivers' devices are still published (the example driver's next change is published too).
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(ForkedTestContainerFactory.class)
public class FelixChurnIT extends NodeletTestSupport {

  static final String CYCLES_PROPERTY = "nodelet.churn.cycles";
  static final int DEFAULT_CYCLES = 20;

  private static final String NS = "default";
  private static final String EXAMPLE_DRIVER = "example.nodelet.dev";
  private static final String EXTERNAL_DRIVER = "gpu.churn.example.com";
  private static final int EXAMPLE_DEVICES = 3;
  private static final int EXTERNAL_DEVICES = 2;
  private static final Map<String, Integer> CONFIGMAP_REFERENCES = Map.of("cm-a", 2, "cm-b", 1);
  private static final Map<String, Integer> SECRET_REFERENCES = Map.of("s-a", 1, "s-pull", 1);
  private static final List<String> WATCHED_RESOURCES =
      List.of("configmaps", "secrets", "pods", "nodes", "resourceslices");
  /** A cycle waits at most this long for a state; far more than any cycle needs. */
  private static final Duration CYCLE_WAIT = Duration.ofSeconds(30);
  /**
   * How long the threads, descriptors and class loaders have to come back to the baseline after the cycles: longer
   * than the Kubernetes client's 90 s idle timeout, after which a connection that a burst of requests added closes.
   */
  private static final Duration SETTLE_WAIT = Duration.ofSeconds(120);

  /** One HTTP/1.1 connection to the test JVM's observation endpoint, opened before any baseline. */
  private static HttpClient observer;
  private static final AtomicLong VALUES = new AtomicLong();

  @Configuration
  public Option[] configuration() {
    ApiServerFixture server = ApiServerFixture.start();
    try (KubernetesClient admin = server.newClient()) {
      seed(admin);
    }
    List<Option> options = new ArrayList<>(List.of(felixOptions(server)));
    // every cycle logs its lifecycle at INFO: a thousand lines per bundle; warnings and errors still show
    options.add(systemProperty("org.slf4j.simpleLogger.defaultLogLevel").value("warn"));
    // an idle keep-alive connection of the JDK HTTP client, like an idle pool thread, ends by itself, after 20
    // minutes; 5 s here, so that the ones the churn left idle are gone within the wait. A connection in use (an
    // open watch, a stranded exchange) is not idle and still counts.
    options.add(systemProperty("jdk.httpclient.keepalive.timeout").value("5"));
    options.add(systemProperty(CYCLES_PROPERTY).value(String.valueOf(Integer.getInteger(CYCLES_PROPERTY,
        DEFAULT_CYCLES))));
    return options.toArray(Option[]::new);
  }

  /** Two pods of this node referencing two ConfigMaps and two Secrets. */
  private static void seed(KubernetesClient admin) {
    // the objects are CONFIGMAP_REFERENCES' and SECRET_REFERENCES' keys
    ApiServerFixture.seedPodP1(admin);
    admin.pods().inNamespace(NS).resource(new PodBuilder().withNewMetadata().withName("p2").endMetadata()
        .withNewSpec().withNodeName(NODE_NAME)
        .addNewContainer().withName("c").withImage("busybox")
        .addNewEnvFrom().withNewConfigMapRef().withName("cm-a").endConfigMapRef().endEnvFrom().endContainer()
        .endSpec().build()).create();
  }

  // ---------------------------------------------------------------- the tests, one per bundle

  @Test
  public void storeWatchChurn() throws Exception {
    churn("nodelet-store-watch", "watch");
  }

  @Test
  public void storeTtlChurn() throws Exception {
    churn("nodelet-store-ttl", "ttl");
  }

  @Test
  public void storeGetChurn() throws Exception {
    churn("nodelet-store-get", "get");
  }

  @Test
  public void exampleDriverChurn() throws Exception {
    churn("nodelet-driver-example", null);
  }

  @Test
  public void draGrpcChurn() throws Exception {
    churn("nodelet-dra-grpc", null);
  }

  // ---------------------------------------------------------------- the churn

  /**
   * Churns one bundle.
   *
   * @param strategy the strategy name the managers are pointed at while a strategy bundle churns; null for a driver
   */
  private void churn(String symbolicName, String strategy) throws Exception {
    int cycles = Integer.getInteger(CYCLES_PROPERTY, DEFAULT_CYCLES);
    settle();
    Ready ready = readiness(symbolicName, strategy);
    if (strategy != null) {
      retarget(strategy);
    }
    // one cycle of each kind first, so that what the framework starts once (Felix's refresh thread, the JDK's
    // process reaper, lazily created pools) is in the baseline rather than counted as a leak
    restart(symbolicName, ready);
    reinstall(symbolicName, ready, new ArrayList<>());
    // a driver churns under whatever strategy the managers use
    String inUse = strategy != null ? strategy : manager("configmaps").strategy();
    awaitServed(inUse);
    Map<String, Integer> expectedWatches = expectedWatches(inUse);
    await().atMost(WAIT).until(this::watches, expectedWatches::equals);
    Snapshot baseline = Snapshot.take(watches());

    Timing restarts = new Timing();
    for (int i = 0; i < cycles; i++) {
      long t = System.nanoTime();
      restart(symbolicName, ready);
      restarts.add(System.nanoTime() - t);
    }
    Timing reinstalls = new Timing();
    List<WeakReference<ClassLoader>> uninstalled = new ArrayList<>();
    for (int i = 0; i < cycles; i++) {
      long t = System.nanoTime();
      reinstall(symbolicName, ready, uninstalled);
      reinstalls.add(System.nanoTime() - t);
    }

    // nothing registered is lost
    awaitServed(inUse);
    // no watch left open on the API server, none missing
    await().atMost(WAIT).until(this::watches, baseline.watches::equals);
    // lasting threads, sockets and other descriptors back to the baseline; what the JDK HttpClient leaves for the
    // garbage collector (its selector thread and idle connections) goes with the next collections
    long deadline = System.nanoTime() + SETTLE_WAIT.toNanos();
    Snapshot after = Snapshot.take(watches());
    while (!after.within(baseline) && System.nanoTime() - deadline < 0) {
      System.gc();
      Thread.sleep(200);
      after = Snapshot.take(watches());
    }
    report(symbolicName, cycles, baseline, after, restarts, reinstalls);
    if (!after.within(baseline)) {
      // no cause attached: Pax Exam would report the cause instead of this message
      throw new AssertionError("after " + cycles + " stop/start and " + cycles + " uninstall/install cycles of "
          + symbolicName + " the framework's JVM holds more than before:\n" + baseline.compare(after));
    }
    // every revision uninstalled can be collected: no thread, static or registration of another bundle holds it
    await().atMost(SETTLE_WAIT).pollInSameThread().pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
      System.gc();
      assertEquals("class loaders of uninstalled " + symbolicName + " revisions still reachable", 0,
          uninstalled.stream().filter(r -> r.get() != null).count());
    });
  }

  /** Stops and starts the bundle, then waits until it is in use again. */
  private void restart(String symbolicName, Ready ready) throws BundleException {
    Bundle bundle = bundle(symbolicName);
    bundle.stop();
    ready.awaitGone();
    bundle.start();
    ready.await(bundle);
  }

  /**
   * Uninstalls the bundle and installs it again from its location, then waits until it is in use again; a weak
   * reference to the old revision's class loader is added to {@code uninstalled}. Should another bundle still be
   * wired to its exports (none is today), the framework is refreshed so that the old revision goes, as Karaf does.
   */
  private void reinstall(String symbolicName, Ready ready, List<WeakReference<ClassLoader>> uninstalled)
      throws Exception {
    Bundle bundle = bundle(symbolicName);
    String location = bundle.getLocation();
    uninstalled.add(new WeakReference<>(bundle.adapt(BundleWiring.class).getClassLoader()));
    bundle.uninstall();
    ready.awaitGone();
    FrameworkWiring wiring = bundleContext.getBundle(0).adapt(FrameworkWiring.class);
    if (!wiring.getRemovalPendingBundles().isEmpty()) {
      CountDownLatch refreshed = new CountDownLatch(1);
      wiring.refreshBundles(null, e -> refreshed.countDown());
      assertTrue("packages refreshed", refreshed.await(WAIT.toMillis(), TimeUnit.MILLISECONDS));
    }
    Bundle installed = bundleContext.installBundle(location);
    installed.start();
    ready.await(installed);
  }

  /** Cycle times. */
  private static final class Timing {
    private long total;
    private long max;
    private int count;

    void add(long nanos) {
      total += nanos;
      max = Math.max(max, nanos);
      count++;
    }

    @Override
    public String toString() {
      return String.format("%.1f ms per cycle (max %.1f)", total / 1e6 / count, max / 1e6);
    }
  }

  /** How the test knows that a started bundle is in use again, and that a stopped one is gone. */
  private interface Ready {
    void await(Bundle bundle);

    void awaitGone();
  }

  private Ready readiness(String symbolicName, String strategy) {
    if (strategy != null) {
      // the managers bind the strategy service, which activates its (delayed) component
      return new Ready() {
        @Override
        public void await(Bundle bundle) {
          until(() -> active(bundle) && uses("configmaps", strategy) && uses("secrets", strategy));
        }

        @Override
        public void awaitGone() {
          until(() -> manager("configmaps").builtInStrategy() && manager("secrets").builtInStrategy());
        }
      };
    }
    String driver = symbolicName.equals("nodelet-dra-grpc") ? EXTERNAL_DRIVER : EXAMPLE_DRIVER;
    // the driver service of the bundle is registered (for the gRPC bundle: after the handshake) and the controller
    // has subscribed to it and taken a snapshot
    return new Ready() {
      @Override
      public void await(Bundle bundle) {
        until(() -> active(bundle) && driverRegistered(bundle, driver) && driverState(driver)
            == DriverStatus.State.MONITORING);
      }

      @Override
      public void awaitGone() {
        until(() -> driverState(driver) == DriverStatus.State.LEAVING);
      }
    };
  }

  /** Every component of the bundle that SCR knows has an active configuration, and none is in another state. */
  private boolean active(Bundle bundle) {
    ServiceComponentRuntime scr = service(ServiceComponentRuntime.class);
    boolean any = false;
    for (ComponentDescriptionDTO description : scr.getComponentDescriptionDTOs(bundle)) {
      for (ComponentConfigurationDTO configuration : scr.getComponentConfigurationDTOs(description)) {
        if (configuration.state != ComponentConfigurationDTO.ACTIVE) {
          return false;
        }
        any = true;
      }
    }
    return any;
  }

  private boolean driverRegistered(Bundle bundle, String driver) {
    ServiceReference<?>[] references = bundle.getRegisteredServices();
    return references != null && Stream.of(references)
        .filter(r -> List.of((String[]) r.getProperty("objectClass")).contains(DeviceSnapshots.class.getName()))
        .anyMatch(r -> {
          DeviceSnapshots service = (DeviceSnapshots) bundleContext.getService(r);
          try {
            return service != null && driver.equals(service.driverName());
          } finally {
            bundleContext.ungetService(r);
          }
        });
  }

  private DriverStatus.State driverState(String driver) {
    return service(DraStatus.class).drivers().stream().filter(d -> d.driverName().equals(driver))
        .map(DriverStatus::state).findFirst().orElse(null);
  }

  // ---------------------------------------------------------------- set-up shared by the tests

  /** Configures Nodelet once: the client, the example driver, the external driver and the gRPC bundle. */
  private void settle() throws Exception {
    if (observer == null) {
      observer = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      ConfigurationAdmin admin = service(ConfigurationAdmin.class);
      admin.getConfiguration(KUBE_PID, "?").update(new Hashtable<>(Map.of(
          "master.url", System.getProperty(API_SERVER_URL_PROPERTY), "node.name", NODE_NAME)));
      Path registry = privateFolder("registry");
      Path plugins = privateFolder("plugins");
      // as the launcher and the Karaf feature configure it: the executor keeps every thread it starts
      admin.getConfiguration("org.apache.felix.hc.core.impl.executor.HealthCheckExecutorThreadPool", "?")
          .update(new Hashtable<>(Map.of("threadPoolSize", 2)));
      admin.getConfiguration("dev.nodelet.dra.grpc", "?").update(new Hashtable<>(Map.of(
          "registration.folder", registry.toString(), "poll.interval.millis", 200L)));
      admin.createFactoryConfiguration("dev.nodelet.driver.example", "?").update(new Hashtable<>(Map.of(
          "driver.name", EXAMPLE_DRIVER, "device.count", EXAMPLE_DEVICES)));
      Process externalDriver = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-jar", System.getProperty(EXTERNAL_DRIVER_JAR_PROPERTY), "--registry", registry.toString(),
          "--plugins", plugins.toString(), "--name", EXTERNAL_DRIVER, "--devices", String.valueOf(EXTERNAL_DEVICES))
          .redirectErrorStream(true).redirectOutput(Path.of(registry + ".log").toFile()).start();
      // the framework ends with the test run; the driver process with it
      Runtime.getRuntime().addShutdownHook(new Thread(externalDriver::destroyForcibly));
    }
    // the services come once the client is configured
    await().atMost(WAIT).ignoreExceptions().until(() -> driverState(EXAMPLE_DRIVER) == DriverStatus.State.MONITORING
        && driverState(EXTERNAL_DRIVER) == DriverStatus.State.MONITORING);
    await().atMost(WAIT).until(() -> devices(EXAMPLE_DRIVER) == EXAMPLE_DEVICES
        && devices(EXTERNAL_DRIVER) == EXTERNAL_DEVICES);
  }

  private void retarget(String strategy) throws Exception {
    ConfigurationAdmin admin = service(ConfigurationAdmin.class);
    for (String pid : List.of("dev.nodelet.configmap", "dev.nodelet.secret")) {
      admin.getConfiguration(pid, "?").update(new Hashtable<>(Map.of(
          "strategy.target", "(nodelet.strategy=" + strategy + ")")));
    }
    await().atMost(WAIT).until(() -> uses("configmaps", strategy) && uses("secrets", strategy));
  }

  /** Whether the manager of {@code resource} uses the strategy service named {@code strategy}, not its own get. */
  private boolean uses(String resource, String strategy) {
    ObjectManager<?> manager = manager(resource);
    return !manager.builtInStrategy() && strategy.equals(manager.strategy());
  }

  /** The watches the API server has open while {@code strategy} serves the managers. */
  private static Map<String, Integer> expectedWatches(String strategy) {
    Map<String, Integer> watches = new TreeMap<>();
    watches.put("configmaps", "watch".equals(strategy) ? CONFIGMAP_REFERENCES.size() : 0);
    watches.put("secrets", "watch".equals(strategy) ? SECRET_REFERENCES.size() : 0);
    watches.put("pods", 1); // the pod source
    watches.put("nodes", 1); // the node identity; the TTL strategy reads the node's annotation from it
    watches.put("resourceslices", 1); // the DRA controller
    return watches;
  }

  // ---------------------------------------------------------------- nothing registered is lost

  /**
   * Both managers keep both pods with their references and serve every referenced object as the API server has it
   * (with the watch strategy, a change made now on the server reaches the get); both drivers' devices are published,
   * and a change of the example driver is published too.
   */
  private void awaitServed(String strategy) throws Exception {
    KubernetesClient client = service(KubernetesClient.class);
    ObjectManager<?> configMaps = manager("configmaps");
    ObjectManager<?> secrets = manager("secrets");
    await().atMost(WAIT).until(() -> references(configMaps), CONFIGMAP_REFERENCES::equals);
    await().atMost(WAIT).until(() -> references(secrets), SECRET_REFERENCES::equals);
    for (ObjectManager<?> manager : List.of(configMaps, secrets)) {
      assertEquals(List.of("p1", "p2"), manager.registeredPods().stream().map(RegisteredPod::name).sorted()
          .collect(Collectors.toList()));
    }
    if ("watch".equals(strategy)) {
      String value = "v" + VALUES.incrementAndGet();
      for (String name : CONFIGMAP_REFERENCES.keySet()) {
        client.configMaps().inNamespace(NS).withName(name).edit(c -> new ConfigMapBuilder(c)
            .addToData("v", value).build());
      }
      for (String name : SECRET_REFERENCES.keySet()) {
        client.secrets().inNamespace(NS).withName(name).edit(s -> new SecretBuilder(s)
            .addToData("v", base64(value)).build());
      }
    }
    await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
      for (String name : CONFIGMAP_REFERENCES.keySet()) {
        ConfigMap served = (ConfigMap) configMaps.get(NS, name);
        assertEquals(name, client.configMaps().inNamespace(NS).withName(name).get().getData(), served.getData());
      }
      for (String name : SECRET_REFERENCES.keySet()) {
        Secret served = (Secret) secrets.get(NS, name);
        assertEquals(name, client.secrets().inNamespace(NS).withName(name).get().getData(), served.getData());
      }
    });

    // one service of each kind, none lost and none left over from an earlier revision
    assertEquals(List.of("get", "ttl", "watch"), serviceProperties(StoreStrategy.class, StoreStrategy.PROPERTY));
    assertEquals(List.of("configmaps", "secrets"),
        serviceProperties(ObjectManager.class, ObjectManager.RESOURCE_PROPERTY));
    await().atMost(WAIT).until(() -> service(DraStatus.class).drivers().stream()
        .map(d -> d.driverName() + "=" + d.state()).sorted().collect(Collectors.toList()),
        List.of(EXAMPLE_DRIVER + "=MONITORING", EXTERNAL_DRIVER + "=MONITORING")::equals);
    assertEquals(2, bundleContext.getServiceReferences(DeviceSnapshots.class, null).size());
    await().atMost(WAIT).until(() -> devices(EXAMPLE_DRIVER) == EXAMPLE_DEVICES
        && devices(EXTERNAL_DRIVER) == EXTERNAL_DEVICES);
    // the example driver is live: a change is published, and so is the way back
    org.osgi.service.cm.Configuration driver = exampleDriverConfiguration();
    driver.update(new Hashtable<>(Map.of("driver.name", EXAMPLE_DRIVER, "device.count", EXAMPLE_DEVICES + 1)));
    await().atMost(WAIT).until(() -> devices(EXAMPLE_DRIVER) == EXAMPLE_DEVICES + 1);
    driver.update(new Hashtable<>(Map.of("driver.name", EXAMPLE_DRIVER, "device.count", EXAMPLE_DEVICES)));
    await().atMost(WAIT).until(() -> devices(EXAMPLE_DRIVER) == EXAMPLE_DEVICES);
  }

  private org.osgi.service.cm.Configuration exampleDriverConfiguration() throws Exception {
    org.osgi.service.cm.Configuration[] configurations = service(ConfigurationAdmin.class)
        .listConfigurations("(service.factoryPid=dev.nodelet.driver.example)");
    assertTrue("one example driver configuration", configurations != null && configurations.length == 1);
    return configurations[0];
  }

  private static Map<String, Integer> references(ObjectManager<?> manager) {
    return manager.objects().stream()
        .collect(Collectors.toMap(CachedObject::name, CachedObject::references, Integer::sum, TreeMap::new));
  }

  /** The devices of this node's slices of a driver, on the API server. */
  private int devices(String driver) {
    return service(KubernetesClient.class).resources(ResourceSlice.class).withField("spec.nodeName", NODE_NAME)
        .withField("spec.driver", driver).list().getItems().stream()
        .mapToInt(s -> s.getSpec().getDevices().size()).sum();
  }

  // ---------------------------------------------------------------- what the JVM and the API server hold

  /** Open watches per resource on the embedded API server (in the test JVM), through its HTTP view. */
  private Map<String, Integer> watches() throws Exception {
    Map<String, Integer> watches = new TreeMap<>();
    for (String resource : WATCHED_RESOURCES) {
      URI uri = URI.create(System.getProperty(API_SERVER_URL_PROPERTY)
          + "/nodelet-testing/watches?resource=" + resource);
      String body = observer.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString()).body();
      watches.put(resource, Integer.parseInt(body.replaceAll("\\D", "")));
    }
    return watches;
  }

  /**
   * Live threads, open file descriptors by kind, and open watches. Threads are compared by role (the name with its
   * numbers as {@code #}), and only those that last: an idle pool worker waiting with a keep-alive ends by itself, so
   * it is neither a leak nor part of the baseline (pools shared with the rest of Nodelet grow and shrink with load).
   */
  private static final class Snapshot {
    final int threads;
    /** Role to the names of its lasting threads. */
    final Map<String, List<String>> lasting;
    final Map<String, Integer> descriptors;
    final Map<String, Integer> watches;

    private Snapshot(int threads, Map<String, List<String>> lasting, Map<String, Integer> descriptors,
        Map<String, Integer> watches) {
      this.threads = threads;
      this.lasting = lasting;
      this.descriptors = descriptors;
      this.watches = watches;
    }

    static Snapshot take(Map<String, Integer> watches) throws IOException {
      Map<Thread, StackTraceElement[]> all = Thread.getAllStackTraces();
      Map<String, List<String>> lasting = new TreeMap<>();
      // names only: a Thread object would hold its context class loader
      all.forEach((thread, stack) -> {
        if (!idleWithKeepAlive(stack)) {
          lasting.computeIfAbsent(thread.getName().replaceAll("\\d+", "#"), r -> new ArrayList<>())
              .add(thread.getName());
        }
      });
      return new Snapshot(all.size(), lasting, descriptors(), watches);
    }

    /** A pool worker waiting for work with a timeout (ThreadPoolExecutor's timed poll, ForkJoinPool's await). */
    private static boolean idleWithKeepAlive(StackTraceElement[] stack) {
      for (int i = 1; i < stack.length; i++) {
        if (stack[i].getClassName().equals("java.util.concurrent.ThreadPoolExecutor")
            && stack[i].getMethodName().equals("getTask")) {
          return stack[i - 1].getMethodName().equals("poll");
        }
        if (stack[i].getClassName().equals("java.util.concurrent.ForkJoinPool")
            && stack[i].getMethodName().equals("awaitWork")) {
          return true;
        }
      }
      return false;
    }

    int lastingCount() {
      return lasting.values().stream().mapToInt(List::size).sum();
    }

    int sockets() {
      return descriptors.entrySet().stream().filter(e -> e.getKey().startsWith("socket"))
          .mapToInt(Map.Entry::getValue).sum();
    }

    int descriptorCount() {
      return descriptors.values().stream().mapToInt(Integer::intValue).sum();
    }

    /** Whether nothing is above {@code baseline}: no role of lasting threads, no kind of descriptor. */
    boolean within(Snapshot baseline) {
      return lasting.entrySet().stream().allMatch(e ->
              e.getValue().size() <= baseline.lasting.getOrDefault(e.getKey(), List.of()).size())
          && descriptors.entrySet().stream().allMatch(e -> e.getValue() <= baseline.descriptors.getOrDefault(
              e.getKey(), 0));
    }

    /** What {@code after} holds beyond this baseline, for a failure message. */
    String compare(Snapshot after) {
      Map<String, List<String>> extraThreads = new TreeMap<>();
      after.lasting.forEach((role, names) -> {
        if (names.size() > lasting.getOrDefault(role, List.of()).size()) {
          extraThreads.put(role + " (" + lasting.getOrDefault(role, List.of()).size() + " before)", names);
        }
      });
      Map<String, String> extraDescriptors = new TreeMap<>();
      after.descriptors.forEach((kind, count) -> {
        if (count > descriptors.getOrDefault(kind, 0)) {
          extraDescriptors.put(kind, descriptors.getOrDefault(kind, 0) + " -> " + count);
        }
      });
      return "threads " + threads + " -> " + after.threads + " (lasting " + lastingCount() + " -> "
          + after.lastingCount() + "), roles with more lasting threads than before: " + extraThreads
          + "\ndescriptors with more than before: " + extraDescriptors + " (all: " + descriptors + " -> "
          + after.descriptors + ")"
          + "\nwatches " + watches + " -> " + after.watches;
    }

    /**
     * The open descriptors of this process by kind: sockets by what they are (TCP to the API server or elsewhere,
     * with the TCP state; unix), pipe, anon_inode:[...], jar, or another file.
     */
    private static Map<String, Integer> descriptors() throws IOException {
      Map<String, String> sockets = socketsByInode();
      Map<String, Integer> kinds = new TreeMap<>();
      for (String target : descriptorTargets()) {
        String kind = target.startsWith("socket:[")
            ? "socket " + sockets.getOrDefault(target.substring(8, target.length() - 1), "(other)")
            : target.startsWith("pipe:") ? "pipe" : target.startsWith("anon_inode:") ? target
            : target.endsWith(".jar") ? "jar" : "file";
        kinds.merge(kind, 1, Integer::sum);
      }
      return kinds;
    }

    private static List<String> descriptorTargets() throws IOException {
      List<Path> fds;
      try (Stream<Path> list = Files.list(Path.of("/proc/self/fd"))) {
        fds = list.collect(Collectors.toList());
      }
      List<String> targets = new ArrayList<>();
      for (Path fd : fds) {
        try {
          targets.add(Files.readSymbolicLink(fd).toString());
        } catch (IOException e) {
          // closed while listing, such as the listing's own
        }
      }
      return targets;
    }

    /**
     * What each socket of the network namespace is, by inode: TCP to the API server or elsewhere with its state (an
     * idle keep-alive connection is ESTABLISHED; one the server closed and this side did not, CLOSE_WAIT), or unix.
     */
    private static Map<String, String> socketsByInode() throws IOException {
      int apiServerPort = URI.create(System.getProperty(API_SERVER_URL_PROPERTY)).getPort();
      Map<String, String> byInode = new TreeMap<>();
      for (String table : List.of("tcp", "tcp6")) {
        // "sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode"
        for (String line : Files.readAllLines(Path.of("/proc/self/net/" + table)).stream().skip(1)
            .collect(Collectors.toList())) {
          String[] c = line.trim().split("\\s+");
          int remotePort = Integer.parseInt(c[2].substring(c[2].indexOf(':') + 1), 16);
          byInode.put(c[9], "tcp " + (remotePort == apiServerPort ? "to the API server" : "elsewhere") + " "
              + TCP_STATES.getOrDefault(c[3], "state " + c[3]));
        }
      }
      // "Num RefCount Protocol Flags Type St Inode Path"
      for (String line : Files.readAllLines(Path.of("/proc/self/net/unix")).stream().skip(1)
          .collect(Collectors.toList())) {
        String[] c = line.trim().split("\\s+");
        if (c.length > 6) {
          byInode.put(c[6], "unix");
        }
      }
      return byInode;
    }

    private static final Map<String, String> TCP_STATES = Map.of("01", "ESTABLISHED", "02", "SYN_SENT",
        "04", "FIN_WAIT1", "05", "FIN_WAIT2", "07", "CLOSE", "08", "CLOSE_WAIT", "09", "LAST_ACK", "0A", "LISTEN",
        "0B", "CLOSING");
  }

  private static void report(String symbolicName, int cycles, Snapshot baseline, Snapshot after, Timing restarts,
      Timing reinstalls) {
    Map<String, Object> figures = new LinkedHashMap<>();
    figures.put("cycles", cycles);
    figures.put("stop/start", restarts);
    figures.put("uninstall/install", reinstalls);
    figures.put("threads", baseline.threads + " -> " + after.threads);
    figures.put("lasting threads", baseline.lastingCount() + " -> " + after.lastingCount());
    figures.put("sockets", baseline.sockets() + " -> " + after.sockets());
    figures.put("descriptors", baseline.descriptorCount() + " -> " + after.descriptorCount());
    figures.put("watches", baseline.watches + " -> " + after.watches);
    System.out.println("CHURN " + symbolicName + " " + figures);
    System.out.println("CHURN " + symbolicName + " in detail: " + baseline.compare(after));
  }

  // ---------------------------------------------------------------- helpers

  /** Waits for a condition that a cycle reaches within milliseconds: polled every millisecond, in this thread. */
  private static void until(BooleanSupplier condition) {
    ConditionFactory await = await().atMost(CYCLE_WAIT).pollInSameThread().pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(1));
    await.until(condition::getAsBoolean);
  }

  /** A property of every service of a type, sorted. */
  private List<String> serviceProperties(Class<?> type, String property) throws Exception {
    return bundleContext.getServiceReferences(type, null).stream().map(r -> String.valueOf(r.getProperty(property)))
        .sorted().collect(Collectors.toList());
  }

  private <T> T service(Class<T> type) {
    ServiceReference<T> reference = bundleContext.getServiceReference(type);
    T service = reference == null ? null : bundleContext.getService(reference);
    if (service == null) {
      throw new AssertionError("no service " + type.getName());
    }
    return service;
  }

  private ObjectManager<?> manager(String resource) {
    try {
      ServiceReference<?>[] references = bundleContext.getServiceReferences(ObjectManager.class.getName(),
          "(" + ObjectManager.RESOURCE_PROPERTY + "=" + resource + ")");
      if (references == null) {
        throw new AssertionError("no " + resource + " manager");
      }
      return (ObjectManager<?>) bundleContext.getService(references[0]);
    } catch (org.osgi.framework.InvalidSyntaxException e) {
      throw new IllegalArgumentException(e);
    }
  }

  private Bundle bundle(String symbolicName) {
    return Stream.of(bundleContext.getBundles()).filter(b -> symbolicName.equals(b.getSymbolicName())).findFirst()
        .orElseThrow(() -> new AssertionError("no bundle " + symbolicName));
  }

  private static Path privateFolder(String name) throws IOException {
    return Files.createTempDirectory("nodelet-churn-" + name + "-",
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
  }

  private static String base64(String value) {
    return Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8));
  }
}
