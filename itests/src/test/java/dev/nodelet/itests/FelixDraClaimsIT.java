package dev.nodelet.itests;

import static org.awaitility.Awaitility.await;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimStatus;
import dev.nodelet.dra.claims.ContainerDevices;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
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
        firstPod.set(createPod(client.await(), "claims-pod-1", "claim-1", "dev-0"));
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
      Pod second = createPod(kube, "claims-pod-2", "claim-2", "dev-1");
      await().atMost(WAIT).until(() -> Optional.ofNullable(info(status.await(), "claim-2")).map(ClaimInfo::error)
          .orElse("").contains(DRIVER));
      driverBundle.start();
      await().atMost(WAIT).until(() -> state(status.await(), "claim-2") == ClaimInfo.State.PREPARED);
      assertEquals(List.of("k8s." + DRIVER + "/device=dev-1"), cdi(status.await(), "claims-pod-2"));

      kube.resource(first).delete();
      kube.resource(second).delete();
      await().atMost(WAIT).until(() -> status.await().claims().isEmpty());
    }
  }

  private static Pod createPod(KubernetesClient kube, String pod, String claim, String device) {
    Pod created = kube.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata()
        .withNamespace("default").withName(pod).endMetadata().withNewSpec().withNodeName(NODE_NAME)
        .addNewResourceClaim().withName("gpu").withResourceClaimName(claim).endResourceClaim()
        .addToContainers(new ContainerBuilder().withName("main").withImage("busybox").withNewResources()
            .addNewClaim().withName("gpu").endClaim().endResources().build())
        .endSpec().build()).createOr(NonDeletingOperation::update);
    ResourceClaim made = kube.resources(ResourceClaim.class).inNamespace("default").resource(
        new ResourceClaimBuilder().withNewMetadata().withNamespace("default").withName(claim).endMetadata()
            .withNewSpec().withNewDevices().addNewRequest().withName("gpu").withNewExactly()
            .withDeviceClassName("gpu.example.com").endExactly().endRequest().endDevices().endSpec().build())
        .createOr(NonDeletingOperation::update);
    made.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addNewResult()
        .withDriver(DRIVER).withPool(POOL).withDevice(device).withRequest("gpu").endResult().endDevices()
        .endAllocation().addNewReservedFor().withResource("pods").withName(pod)
        .withUid(created.getMetadata().getUid()).endReservedFor().build());
    kube.resources(ResourceClaim.class).inNamespace("default").resource(made).updateStatus();
    // the claim is allocated after the pod was bound: the pod's next update brings the claim manager back to it
    kube.pods().inNamespace("default").withName(pod).edit(p -> new PodBuilder(p).editMetadata()
        .addToLabels("allocated", "true").endMetadata().build());
    return created;
  }

  private static ClaimInfo info(ClaimStatus status, String claim) {
    return status.claims().stream().filter(c -> c.name().equals(claim)).findFirst().orElse(null);
  }

  private static ClaimInfo.State state(ClaimStatus status, String claim) {
    ClaimInfo info = info(status, claim);
    return info == null ? null : info.state();
  }

  private static List<String> cdi(ClaimStatus status, String pod) {
    return status.containers().stream().filter(c -> c.podName().equals(pod)).findFirst()
        .map(ContainerDevices::cdiDeviceIds).orElse(List.of());
  }
}
