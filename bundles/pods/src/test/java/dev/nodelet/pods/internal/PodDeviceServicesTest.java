package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.dra.claims.ClaimManager;
import dev.nodelet.pods.PodBundles;
import dev.nodelet.pods.PodDevice;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceListener;
import org.osgi.framework.ServiceReference;

/**
 * The devices of a container's claims as {@link PodDevice} services: seen by that container's bundle only, never
 * by another pod's (neither found nor heard of), and withdrawn when the pod goes.
 */
class PodDeviceServicesTest {

  private static final String GPU = "gpu.example.com";

  @TempDir
  Path dir;
  PodsHarness h;
  ClaimManager manager;

  @BeforeEach
  void start() throws Exception {
    h = new PodsHarness(dir);
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    TestBundles.write(h.repository, "org.example", "other", "1.0.0", null);
    h.client.resources(ResourceSlice.class).resource(new ResourceSliceBuilder().withNewMetadata()
        .withName("node-1-gpu").endMetadata().withNewSpec().withDriver(GPU).withNodeName(PodsHarness.NODE)
        .withNewPool().withName("pool-a").withGeneration(1L).withResourceSliceCount(1L).endPool()
        .addNewDevice().withName("gpu-0")
        .addToAttributes("model", new DeviceAttributeBuilder().withString("T4").build()).endDevice()
        .addNewDevice().withName("gpu-1")
        .addToAttributes("model", new DeviceAttributeBuilder().withString("T4").build()).endDevice()
        .endSpec().build()).create();
    manager = ClaimManager.builder(h.client, PodsHarness.NODE).stateDirectory(dir.resolve("claims"))
        .retry(Duration.ofMillis(50), Duration.ofMillis(200)).build();
    manager.addDriver(new PodDevicesTest.Driver());
    manager.start();
    h.claimStatus = manager;
  }

  @AfterEach
  void stop() throws Exception {
    manager.close();
    h.close();
  }

  /** Pod {@code name}: container app uses its claim (device {@code device}), container other none. */
  private Pod run(String name, String device) throws Exception {
    Pod pod = h.client.pods().inNamespace("default").resource(new PodBuilder().withNewMetadata().withName(name)
        .withNamespace("default").endMetadata().withNewSpec().withNodeName(PodsHarness.NODE)
        .addNewResourceClaim().withName("gpu").withResourceClaimName(name + "-claim").endResourceClaim()
        .addNewContainer().withName("app").withImage("mvn:org.example/hello/1.0.0").withNewResources()
        .addNewClaim().withName("gpu").endClaim().endResources().endContainer()
        .addNewContainer().withName("other").withImage("mvn:org.example/other/1.0.0").endContainer()
        .endSpec().build()).create();
    ResourceClaim claim = h.client.resources(ResourceClaim.class).inNamespace("default").resource(
        new ResourceClaimBuilder().withNewMetadata().withNamespace("default").withName(name + "-claim")
            .endMetadata().withNewSpec().withNewDevices().addNewRequest().withName("req").withNewExactly()
            .withDeviceClassName(GPU).endExactly().endRequest().endDevices().endSpec().build()).create();
    claim.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addNewResult()
        .withDriver(GPU).withPool("pool-a").withDevice(device).withRequest("req").endResult().endDevices()
        .endAllocation().addNewReservedFor().withResource("pods").withName(name)
        .withUid(pod.getMetadata().getUid()).endReservedFor().build());
    h.client.resources(ResourceClaim.class).inNamespace("default").resource(claim).updateStatus();
    manager.podUpdated(pod);
    h.runtime.podUpdated(pod);
    h.idle();
    await().atMost(Duration.ofSeconds(10)).until(() -> h.container(name, "app").getState().getRunning() != null);
    return pod;
  }

  private BundleContext contextOf(String pod, String container) {
    return h.felix.context().getBundle("nodelet-pod:default/" + pod + "/" + container).getBundleContext();
  }

  private static List<String> devices(BundleContext context) throws Exception {
    ServiceReference<?>[] found = context.getServiceReferences(PodDevice.class.getName(), null);
    List<String> out = new ArrayList<>();
    if (found != null) {
      for (ServiceReference<?> reference : found) {
        out.add(reference.getProperty(PodBundles.POD_NAME) + "/" + reference.getProperty(PodDevice.DEVICE));
      }
    }
    return out;
  }

  @Test
  void eachContainerSeesItsOwnDevicesOnlyAndHearsOfNoOtherPodsDevices() throws Exception {
    run("q", "gpu-1");
    BundleContext q = contextOf("q", "app");
    List<String> heard = new CopyOnWriteArrayList<>();
    ServiceListener listener = event -> heard.add(event.getType() + " "
        + event.getServiceReference().getProperty(PodDevice.DEVICE));
    q.addServiceListener(listener, "(objectClass=" + PodDevice.class.getName() + ")");

    run("p", "gpu-0");
    assertThat(devices(contextOf("p", "app"))).containsExactly("p/gpu-0");
    assertThat(devices(q)).containsExactly("q/gpu-1");
    assertThat(devices(contextOf("p", "other"))).as("a container without the claim").isEmpty();
    assertThat(devices(contextOf("q", "other"))).isEmpty();

    // the service describes the device as the configuration does
    ServiceReference<?> reference = contextOf("p", "app").getServiceReferences(PodDevice.class.getName(), null)[0];
    PodDevice device = (PodDevice) contextOf("p", "app").getService(reference);
    assertThat(device.driver()).isEqualTo(GPU);
    assertThat(device.pool()).isEqualTo("pool-a");
    assertThat(device.device()).isEqualTo("gpu-0");
    assertThat(device.claim()).isEqualTo("gpu");
    assertThat(device.claimName()).isEqualTo("p-claim");
    assertThat(device.request()).isEmpty();
    assertThat(device.cdiDeviceIds()).containsExactly("k8s.gpu.example.com/device=gpu-0");
    assertThat(device.attributes()).containsEntry("model", "T4");
    assertThat(reference.getProperty(PodDevice.CONTAINER_LOCATION)).isEqualTo("nodelet-pod:default/p/app");
    assertThat(reference.getProperty(PodDevice.INDEX)).isEqualTo(0);

    // the pod goes: its device services go, and q heard of none of p's
    Pod deleting = h.client.pods().inNamespace("default").withName("p").get();
    deleting.getMetadata().setDeletionTimestamp("2026-11-28T10:00:05Z");
    h.runtime.podUpdated(deleting);
    manager.podUpdated(deleting);
    h.idle();
    assertThat(h.felix.context().getServiceReferences(PodDevice.class.getName(), null))
        .extracting(r -> r.getProperty(PodDevice.DEVICE)).containsExactly("gpu-1");
    assertThat(h.deviceServices.locations()).containsExactly("nodelet-pod:default/q/app");
    assertThat(heard).isEmpty();
    q.removeServiceListener(listener);
  }
}
