package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.editConfigurationFilePut;

import dev.nodelet.kube.NodeIdentity;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.inject.Inject;
import org.apache.karaf.features.FeaturesService;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.ExamFactory;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.karaf.container.internal.KarafTestContainerFactory;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceEvent;
import org.osgi.framework.ServiceListener;
import org.osgi.framework.ServiceReference;

/**
 * The DRA controller in a real Karaf with the example driver as a jar in {@code deploy/} (hot deploy): only
 * the feature {@code nodelet-dra} is installed; the driver's factory configuration and a short grace period come
 * from {@code etc/}. Deploying the jar publishes the driver's ResourceSlices; overwriting it (a bundle update)
 * changes no slice; removing it deletes the slices once the grace period is over and not before; stopping
 * {@code nodelet-dra} leaves none of the controller's threads behind.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(KarafTestContainerFactory.class)
public class KarafDraDeployIT extends NodeletTestSupport {

  private static final String DRA_PID = "dev.nodelet.dra";
  private static final String DRA_BUNDLE = "nodelet-dra";
  private static final String DRIVER_PID = "dev.nodelet.driver.example";
  private static final String DRIVER_BUNDLE = "nodelet-driver-example";
  private static final String DRA_DRIVER = "dev.nodelet.dra.DeviceSnapshots";
  private static final String DRIVER = "example.itest.nodelet.dev";
  private static final String POOL = "itest-pool";
  private static final int DEVICES = 3;
  /** The grace period of dev.nodelet.dra; the kubelet's 30 s would make this test slow. */
  private static final Duration GRACE = Duration.ofSeconds(5);
  /** The controller's own threads (NodeResourcesController and its ExecutorScheduler). */
  private static final String DRA_THREAD_PREFIX = "nodelet-dra-";


  @Inject
  private FeaturesService featuresService;

  @Configuration
  public Option[] configuration() {
    List<Option> options = new ArrayList<>(List.of(karafOptions()));
    options.add(editConfigurationFilePut("etc/" + DRA_PID + ".cfg", "grace.period.seconds",
        String.valueOf(GRACE.toSeconds())));
    String driverCfg = "etc/" + DRIVER_PID + "-itest.cfg";
    options.add(editConfigurationFilePut(driverCfg, "driver.name", DRIVER));
    options.add(editConfigurationFilePut(driverCfg, "pool", POOL));
    options.add(editConfigurationFilePut(driverCfg, "device.count", String.valueOf(DEVICES)));
    return options.toArray(Option[]::new);
  }

  @Test
  public void aDriverJarInDeployIsPublishedSurvivesAnUpdateAndIsRemovedAfterTheGracePeriod() throws Exception {
    String version = System.getProperty(VERSION_PROPERTY);
    featuresService.addRepository(URI.create("mvn:dev.nodelet/nodelet-features/" + version + "/xml/features"));
    featuresService.installFeature("nodelet-dra", EnumSet.of(FeaturesService.Option.NoAutoRefreshBundles));
    assertTrue(featuresService.isInstalled(featuresService.getFeature("nodelet-dra")));
    assertFalse(featuresService.isInstalled(featuresService.getFeature("nodelet-driver-example")));
    assertEquals(Optional.empty(), bundle(DRIVER_BUNDLE));

    Path source = Path.of(System.getProperty(DRIVER_EXAMPLE_JAR_PROPERTY));
    assertTrue("the example driver jar " + source + " exists", Files.isRegularFile(source));
    Path deployed = Path.of(System.getProperty("karaf.base"), "deploy", DRIVER_BUNDLE + ".jar");
    Path staging = Files.createDirectories(Path.of(System.getProperty("karaf.data"), "itest-staging"));

    try (Tracked<KubernetesClient> client = track(KubernetesClient.class,
        "(" + NodeIdentity.NODE_NAME_PROPERTY + "=" + NODE_NAME + ")")) {
      Slices slices = Slices.of(client.await());
      assertEquals("no slices before the driver is deployed", Map.of(), slices.identities());

      // 1. deployed: the driver's devices become this node's slices
      placeInDeploy(source, staging, deployed);
      long bundleId = await().atMost(WAIT).until(() -> bundle(DRIVER_BUNDLE), Optional::isPresent).get()
          .getBundleId();
      long serviceId = await().atMost(WAIT).until(this::driverServiceId, Optional::isPresent).get();
      await("the driver's devices are published").atMost(WAIT)
          .until(slices::deviceNames, List.of("dev-0", "dev-1", "dev-2")::equals);
      assertEquals(List.of(), slices.problems(System.getProperty(NODE_UID_PROPERTY)));
      Map<String, String> published = slices.identities();

      // 2. the jar is overwritten: fileinstall updates the bundle, the DeviceSnapshots service goes and comes back,
      // and the slices stay exactly as they were (same names, UIDs and resourceVersions) past a grace period
      Bundle driverBundle = bundleContext.getBundle(bundleId);
      long lastModified = driverBundle.getLastModified();
      placeInDeploy(source, staging, deployed);
      await().atMost(WAIT).until(() -> driverBundle.getLastModified() != lastModified
          && driverBundle.getState() == Bundle.ACTIVE);
      long updatedServiceId = await().atMost(WAIT).until(this::driverServiceId,
          id -> id.isPresent() && id.get() != serviceId).get();
      assertNotEquals(serviceId, updatedServiceId);
      assertEquals("the update left the bundle in place", Optional.of(bundleId),
          bundle(DRIVER_BUNDLE).map(Bundle::getBundleId));
      // a change of a slice cannot be undone (its resourceVersion moves on), so a generous bound past the quiet
      // period only gives a slow machine time for its first look
      Duration quiet = GRACE.plusSeconds(2);
      await("no slice is created, updated or deleted").during(quiet).atMost(quiet.plus(WAIT))
          .untilAsserted(() -> assertEquals("slices during and after the update", published, slices.identities()));

      // 3. the jar is removed: the slices stay for the grace period after the DeviceSnapshots service went away, then
      // they are deleted
      AtomicLong unregistered = new AtomicLong();
      ServiceListener listener = event -> {
        if (event.getType() == ServiceEvent.UNREGISTERING) {
          unregistered.compareAndSet(0, System.nanoTime());
        }
      };
      bundleContext.addServiceListener(listener,
          "(&(objectClass=" + DRA_DRIVER + ")(driver.name=" + DRIVER + "))");
      try {
        Files.delete(deployed);
        await().atMost(WAIT).until(() -> bundle(DRIVER_BUNDLE), Optional::isEmpty);
      } finally {
        bundleContext.removeServiceListener(listener);
      }
      long wentAway = unregistered.get();
      assertNotEquals("the DeviceSnapshots service was unregistered", 0, wentAway);
      assertEquals(Optional.empty(), driverServiceId());
      assertEquals("the slices right after the driver went away", published, slices.identities());
      // every look that ended within the grace period (less a margin) sees them unchanged, however few looks a
      // loaded machine manages; then they go
      long graceOver = wentAway + GRACE.minusMillis(250).toNanos();
      List<Map<String, String>> changedWithinGrace = new CopyOnWriteArrayList<>();
      await("the slices are deleted after the grace period").atMost(GRACE.plus(WAIT)).until(() -> {
        Map<String, String> seen = slices.identities();
        if (System.nanoTime() - graceOver < 0 && !published.equals(seen)) {
          changedWithinGrace.add(seen);
        }
        return seen.isEmpty();
      });
      assertEquals("slices seen changed within the grace period", List.of(), changedWithinGrace);
      Duration gone = Duration.ofNanos(System.nanoTime() - wentAway);
      // the controller hears of the unregistration in the same event dispatch as this test's listener
      assertTrue("the slices were deleted " + gone.toMillis() + " ms after the driver went away, before the "
          + GRACE.toSeconds() + " s grace period was over", gone.compareTo(GRACE.minusMillis(250)) >= 0);
    } finally {
      Files.deleteIfExists(deployed);
    }

    // 4. nodelet-dra stopped: none of the controller's threads survives
    Bundle dra = bundle(DRA_BUNDLE).orElseThrow(() -> new AssertionError("no bundle " + DRA_BUNDLE));
    Set<String> running = draThreads();
    assertTrue("the controller's threads run: " + running,
        running.containsAll(Set.of("nodelet-dra-timer", "nodelet-dra-worker")));
    dra.stop();
    try {
      await().atMost(WAIT).untilAsserted(() -> assertEquals(Set.of(), draThreads()));
    } finally {
      dra.start();
    }
  }

  /** Copies the jar next to deploy/ with a fresh modification time and moves it in, so fileinstall sees it whole. */
  private static void placeInDeploy(Path source, Path staging, Path deployed) throws Exception {
    Path copy = staging.resolve(deployed.getFileName());
    Files.copy(source, copy, StandardCopyOption.REPLACE_EXISTING);
    Files.setLastModifiedTime(copy, FileTime.from(Instant.now()));
    Files.move(copy, deployed, StandardCopyOption.ATOMIC_MOVE);
  }

  private Optional<Bundle> bundle(String symbolicName) {
    return Stream.of(bundleContext.getBundles()).filter(b -> symbolicName.equals(b.getSymbolicName())).findFirst();
  }

  /** The service.id of the newest DeviceSnapshots service for {@link #DRIVER}, if one is registered. */
  private Optional<Long> driverServiceId() throws Exception {
    ServiceReference<?>[] refs = bundleContext.getAllServiceReferences(DRA_DRIVER, "(driver.name=" + DRIVER + ")");
    if (refs == null) {
      return Optional.empty();
    }
    for (ServiceReference<?> ref : refs) {
      assertEquals("the bundle of a DeviceSnapshots service for " + DRIVER, DRIVER_BUNDLE,
          ref.getBundle().getSymbolicName());
    }
    return Stream.of(refs).map(r -> (Long) r.getProperty("service.id")).max(Long::compare);
  }

  private static Set<String> draThreads() {
    return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
        .filter(n -> n.startsWith(DRA_THREAD_PREFIX)).collect(Collectors.toCollection(TreeSet::new));
  }

  /**
   * This node's slices of {@link #DRIVER} on the API server, read through Nodelet's KubernetesClient service. A
   * class of its own: JUnit reflects on the test class before the feature brings fabric8, so no method of the
   * test class may name a fabric8 type.
   */
  static final class Slices {
    private final KubernetesClient client;

    private Slices(KubernetesClient client) {
      this.client = client;
    }

    static Slices of(Object client) {
      return new Slices((KubernetesClient) client);
    }

    List<ResourceSlice> list() {
      return client.resources(ResourceSlice.class).withField("spec.nodeName", NODE_NAME)
          .withField("spec.driver", DRIVER).list().getItems();
    }

    /** name → "uid=… resourceVersion=…": any create, delete or update changes it. */
    Map<String, String> identities() {
      return list().stream().collect(Collectors.toMap(s -> s.getMetadata().getName(),
          s -> "uid=" + s.getMetadata().getUid() + " resourceVersion=" + s.getMetadata().getResourceVersion(),
          (a, b) -> a + " AND " + b, TreeMap::new));
    }

    /** The device names of all slices, sorted. */
    List<String> deviceNames() {
      return list().stream().flatMap(s -> s.getSpec().getDevices().stream()).map(Device::getName).sorted()
          .collect(Collectors.toList());
    }

    /** What is wrong with the published slices: field selectors, pool, owner. */
    List<String> problems(String nodeUid) {
      List<String> problems = new ArrayList<>();
      List<ResourceSlice> slices = list();
      if (slices.size() != 1) {
        problems.add(slices.size() + " slices for " + DEVICES + " devices, expected 1");
      }
      for (ResourceSlice slice : slices) {
        String name = slice.getMetadata().getName();
        if (!NODE_NAME.equals(slice.getSpec().getNodeName()) || !DRIVER.equals(slice.getSpec().getDriver())) {
          problems.add(name + ": node " + slice.getSpec().getNodeName() + ", driver " + slice.getSpec().getDriver());
        }
        if (!POOL.equals(slice.getSpec().getPool().getName())
            || !Long.valueOf(slices.size()).equals(slice.getSpec().getPool().getResourceSliceCount())) {
          problems.add(name + ": pool " + slice.getSpec().getPool());
        }
        List<OwnerReference> owners = slice.getMetadata().getOwnerReferences();
        if (owners.size() != 1 || !"Node".equals(owners.get(0).getKind())
            || !NODE_NAME.equals(owners.get(0).getName()) || !nodeUid.equals(owners.get(0).getUid())
            || !Boolean.TRUE.equals(owners.get(0).getController())) {
          problems.add(name + ": owners " + owners);
        }
      }
      return problems;
    }
  }
}
