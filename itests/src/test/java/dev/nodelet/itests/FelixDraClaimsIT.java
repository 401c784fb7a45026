package dev.nodelet.itests;

import static dev.nodelet.itests.DraClaimsFixture.cdi;
import static dev.nodelet.itests.DraClaimsFixture.createPod;
import static dev.nodelet.itests.DraClaimsFixture.info;
import static dev.nodelet.itests.DraClaimsFixture.state;
import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Hashtable;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
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
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * nodelet-dra-claims in Felix with the example driver bundle: a pod of this node whose claim the test allocated (as
 * the scheduler would) is prepared by the driver bundle and its CDI ID shown; with the driver bundle stopped a new
 * pod's claim fails with the driver named, and starting the bundle again (a hot deployment) prepares it; deleting
 * the pods unprepares the claims.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
@ExamFactory(ForkedTestContainerFactory.class)
public class FelixDraClaimsIT extends NodeletTestSupport {

  private static final String CLAIMS_PID = "dev.nodelet.dra.claims";
  private static final String DRIVER_PID = "dev.nodelet.driver.example";
  private static final String DRIVER_BUNDLE = "nodelet-driver-example";
  private static final String DRIVER = "claims.itest.nodelet.dev";
  private static final String POOL = "itest-pool";

  @Configuration
  public Option[] configuration() {
    return felixOptions();
  }

  @Test
  public void aDriverBundlePreparesTheClaimsOfThisNodesPodsAndUnpreparesThemWhenThePodsGo() throws Exception {
    Path state = Files.createTempDirectory("nodelet-claims-");
    try (Tracked<ConfigurationAdmin> admin = track(ConfigurationAdmin.class, null);
        Tracked<KubernetesClient> client = track(KubernetesClient.class, null);
        Tracked<ClaimStatus> status = track(ClaimStatus.class, null)) {
      admin.await().getConfiguration(KUBE_PID, "?").update(new Hashtable<>(Map.of(
          "master.url", System.getProperty(API_SERVER_URL_PROPERTY), "node.name", NODE_NAME)));
      admin.await().getConfiguration(CLAIMS_PID, "?").update(new Hashtable<>(Map.of(
          "state.directory", state.toString(), "retry.max.millis", 1000L)));
      admin.await().createFactoryConfiguration(DRIVER_PID, "?").update(new Hashtable<>(Map.of(
          "driver.name", DRIVER, "pool", POOL, "device.count", 2)));
      // a new kube configuration replaces the client: retry until the one that stays answers
      AtomicReference<Pod> firstPod = new AtomicReference<>();
      await().atMost(WAIT).ignoreExceptions().until(() -> {
        firstPod.set(createPod(client.await(), DRIVER, POOL, "claims-pod-1", "claim-1", "dev-0"));
        return true;
      });
      KubernetesClient kube = client.await();
      Pod first = firstPod.get();
      await().atMost(WAIT).until(() -> state(status.await(), "claim-1") == ClaimInfo.State.PREPARED);
      await().atMost(WAIT).until(() -> cdi(status.await(), "claims-pod-1")
          .equals(List.of("k8s." + DRIVER + "/device=dev-0")));
      assertTrue(Files.readString(state.resolve("dra_manager_state")).contains("claim-1"));

      // without the driver bundle the claim of a new pod fails, naming the driver; the bundle's return prepares it
      Bundle driverBundle = Stream.of(bundleContext.getBundles())
          .filter(b -> DRIVER_BUNDLE.equals(b.getSymbolicName())).findFirst().orElseThrow();
      driverBundle.stop();
      Pod second = createPod(kube, DRIVER, POOL, "claims-pod-2", "claim-2", "dev-1");
      await().atMost(WAIT).until(() -> Optional.ofNullable(info(status.await(), "claim-2")).map(ClaimInfo::error)
          .orElse("").contains(DRIVER));
      driverBundle.start();
      await().atMost(WAIT).until(() -> state(status.await(), "claim-2") == ClaimInfo.State.PREPARED);
      assertEquals(List.of("k8s." + DRIVER + "/device=dev-1"), cdi(status.await(), "claims-pod-2"));

      kube.resource(first).withGracePeriod(0).delete(); // at once: no node stops it here
      kube.resource(second).withGracePeriod(0).delete();
      await().atMost(WAIT).until(() -> status.await().claims().isEmpty());
    }
  }
}
