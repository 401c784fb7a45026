package dev.nodelet.itests;

import static dev.nodelet.itests.DraClaimsFixture.cdi;
import static dev.nodelet.itests.DraClaimsFixture.createPod;
import static dev.nodelet.itests.DraClaimsFixture.pods;
import static dev.nodelet.itests.DraClaimsFixture.state;
import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.karaf.options.KarafDistributionOption.editConfigurationFilePut;

import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimStatus;
import dev.nodelet.kube.NodeIdentity;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
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

/**
 * The claim manager in a real Karaf: only the feature {@code nodelet-dra-claims} is installed, the example driver is
 * hot-deployed as a jar in {@code deploy/} with its factory configuration from {@code etc/}; a pod's allocated
 * claim is prepared by it (CDI ID shown, checkpoint under {@code karaf.data}), and deleting the pod unprepares it.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(KarafTestContainerFactory.class)
public class KarafDraClaimsIT extends NodeletTestSupport {

  private static final String DRIVER_PID = "dev.nodelet.driver.example";
  private static final String DRIVER_BUNDLE = "nodelet-driver-example";
  private static final String DRIVER = "karaf.claims.itest.nodelet.dev";
  private static final String POOL = "karaf-pool";

  @Inject
  private FeaturesService featuresService;

  @Configuration
  public Option[] configuration() {
    List<Option> options = new ArrayList<>(List.of(karafOptions()));
    options.add(editConfigurationFilePut("etc/dev.nodelet.dra.claims.cfg", "state.directory",
        "${karaf.data}/dra"));
    String driverCfg = "etc/" + DRIVER_PID + "-claims.cfg";
    options.add(editConfigurationFilePut(driverCfg, "driver.name", DRIVER));
    options.add(editConfigurationFilePut(driverCfg, "pool", POOL));
    options.add(editConfigurationFilePut(driverCfg, "device.count", "2"));
    return options.toArray(Option[]::new);
  }

  @Test
  public void aHotDeployedDriverBundlePreparesAPodsClaimAndDeletingThePodUnpreparesIt() throws Exception {
    String version = System.getProperty(VERSION_PROPERTY);
    featuresService.addRepository(URI.create("mvn:dev.nodelet/nodelet-features/" + version + "/xml/features"));
    featuresService.installFeature("nodelet-dra-claims", EnumSet.of(FeaturesService.Option.NoAutoRefreshBundles));

    Path deployed = Path.of(System.getProperty("karaf.base"), "deploy", DRIVER_BUNDLE + ".jar");
    Path staging = Files.createDirectories(Path.of(System.getProperty("karaf.data"), "itest-staging"))
        .resolve(DRIVER_BUNDLE + ".jar");
    try (Tracked<KubernetesClient> client = track(KubernetesClient.class,
        "(" + NodeIdentity.NODE_NAME_PROPERTY + "=" + NODE_NAME + ")");
        Tracked<ClaimStatus> status = track(ClaimStatus.class, null)) {
      Files.copy(Path.of(System.getProperty(DRIVER_EXAMPLE_JAR_PROPERTY)), staging,
          StandardCopyOption.REPLACE_EXISTING);
      Files.move(staging, deployed, StandardCopyOption.ATOMIC_MOVE);
      await().atMost(WAIT).until(() -> Stream.of(bundleContext.getBundles())
          .anyMatch(b -> DRIVER_BUNDLE.equals(b.getSymbolicName())));

      Pod pod = createPod(client.await(), DRIVER, POOL, "karaf-claims-pod", "karaf-claim", "dev-1");
      await().atMost(WAIT).until(() -> state(status.await(), "karaf-claim") == ClaimInfo.State.PREPARED);
      await().atMost(WAIT).until(() -> cdi(status.await(), "karaf-claims-pod")
          .equals(List.of("k8s." + DRIVER + "/device=dev-1")));
      assertEquals(List.of("default/karaf-claims-pod"), pods(status.await(), "karaf-claim"));
      Path checkpoint = Path.of(System.getProperty("karaf.data"), "dra", "dra_manager_state");
      assertTrue(Files.readString(checkpoint).contains("karaf-claim"));

      DraClaimsFixture.delete(client.await(), pod);
      await().atMost(WAIT).until(() -> status.await().claims().isEmpty());
      assertTrue(!Files.readString(checkpoint).contains("karaf-claim"));
    } finally {
      Files.deleteIfExists(deployed);
    }
  }
}
