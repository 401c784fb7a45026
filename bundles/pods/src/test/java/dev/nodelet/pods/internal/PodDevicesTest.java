package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.dra.ClaimRef;
import dev.nodelet.dra.PrepareResult;
import dev.nodelet.dra.claims.ClaimManager;
import dev.nodelet.testing.dra.PreparingDriver;
import io.fabric8.kubernetes.api.model.ContainerStatus;
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
import java.util.Dictionary;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;
import org.osgi.service.cm.Configuration;

/**
 * A pod's resource claims, prepared by a real claim manager (the in-process driver of testing/dra) against the
 * embedded API server, gate its containers' start and reach their configuration.
 */
class PodDevicesTest {

  private static final String GPU = "gpu.example.com";

  @TempDir
  Path dir;
  PodsHarness h;
  ClaimManager manager;
  final Driver driver = new Driver();

  /** Prepares as the in-process driver does; fails while {@link #fail} is set; records the calls. */
  static final class Driver extends PreparingDriver {
    final AtomicBoolean fail = new AtomicBoolean();
    final List<String> calls = new CopyOnWriteArrayList<>();

    Driver() {
      super(GPU);
    }

    @Override
    public Map<String, PrepareResult> prepare(List<ClaimRef> claims) {
      claims.forEach(c -> calls.add("prepare " + c.name()));
      if (fail.get()) {
        throw new IllegalStateException("device busy");
      }
      return super.prepare(claims);
    }

    @Override
    public Map<String, String> unprepare(List<ClaimRef> claims) {
      claims.forEach(c -> calls.add("unprepare " + c.name()));
      return super.unprepare(claims);
    }
  }

  @BeforeEach
  void start() throws Exception {
    h = new PodsHarness(dir);
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    TestBundles.write(h.repository, "org.example", "other", "1.0.0", null);
    h.client.resources(ResourceSlice.class).resource(new ResourceSliceBuilder().withNewMetadata()
        .withName("node-1-gpu").endMetadata().withNewSpec().withDriver(GPU).withNodeName(PodsHarness.NODE)
        .withNewPool().withName("pool-a").withGeneration(1L).withResourceSliceCount(1L).endPool()
        .addNewDevice().withName("gpu-0")
        .addToAttributes("model", new DeviceAttributeBuilder().withString("T4").build())
        .addToAttributes("index", new DeviceAttributeBuilder().withInt(0L).build()).endDevice()
        .endSpec().build()).create();
  }

  @AfterEach
  void stop() throws Exception {
    if (manager != null) {
      manager.close();
    }
    h.close();
  }

  private void startManager() {
    manager = ClaimManager.builder(h.client, PodsHarness.NODE).stateDirectory(dir)
        .retry(Duration.ofMillis(50), Duration.ofMillis(200)).build();
    manager.addDriver(driver);
    manager.start();
    h.claimStatus = manager;
  }

  /** Container app uses the claim entry gpu; container other uses none. */
  private static Pod pod() {
    return new PodBuilder().withNewMetadata().withName("p").withNamespace("default").endMetadata().withNewSpec()
        .addNewResourceClaim().withName("gpu").withResourceClaimName("gpu-claim").endResourceClaim()
        .addNewContainer().withName("app").withImage("mvn:org.example/hello/1.0.0").withNewResources()
        .addNewClaim().withName("gpu").withRequest("req").endClaim().endResources().endContainer()
        .addNewContainer().withName("other").withImage("mvn:org.example/other/1.0.0").endContainer()
        .endSpec().build();
  }

  /** Creates the claim allocated with device gpu-0 and reserved for the pod, as the scheduler leaves it. */
  private void allocate(Pod pod) {
    ResourceClaim created = h.client.resources(ResourceClaim.class).inNamespace("default").resource(
        new ResourceClaimBuilder().withNewMetadata().withNamespace("default").withName("gpu-claim").endMetadata()
            .withNewSpec().withNewDevices().addNewRequest().withName("req").withNewExactly()
            .withDeviceClassName(GPU).endExactly().endRequest().endDevices().endSpec().build())
        .create();
    created.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addNewResult()
        .withDriver(GPU).withPool("pool-a").withDevice("gpu-0").withRequest("req").endResult().endDevices()
        .endAllocation().addNewReservedFor().withResource("pods").withName(pod.getMetadata().getName())
        .withUid(pod.getMetadata().getUid()).endReservedFor().build());
    h.client.resources(ResourceClaim.class).inNamespace("default").resource(created).updateStatus();
  }

  /** Hands a pod created already to the managers and the runtime, as the pod source would. */
  private void feed(Pod created) throws Exception {
    h.configMaps.registerPod(created);
    h.secrets.registerPod(created);
    h.runtime.podUpdated(created);
    h.idle();
  }

  private Dictionary<String, Object> configuration(String container) throws Exception {
    Configuration[] bound = new ConfigDelivery(h.felix.configurationAdmin).bound("nodelet-pod:default/p/"
        + container);
    assertThat(bound).hasSize(1);
    return bound[0].getProperties();
  }

  private void awaitRunning() {
    await().atMost(Duration.ofSeconds(10)).until(() -> h.container("p", "app").getState().getRunning() != null
        && h.container("p", "other").getState().getRunning() != null);
  }

  @Test
  void aPodWaitsForTheClaimManagerThenStartsWithItsDevicesInTheConfiguration() throws Exception {
    Pod pod = h.run(pod());
    ContainerStatus waiting = h.container("p", "app");
    assertThat(waiting.getState().getWaiting().getReason()).isEqualTo("ContainerCreating");
    assertThat(waiting.getState().getWaiting().getMessage()).isEqualTo(PodDevices.NOT_RUNNING);
    assertThat(h.container("p", "other").getState().getWaiting().getMessage()).isEqualTo(PodDevices.NOT_RUNNING);
    assertThat(h.felix.context().getBundle("nodelet-pod:default/p/app")).isNull();

    startManager();
    allocate(pod);
    manager.podUpdated(pod);
    awaitRunning();

    Dictionary<String, Object> app = configuration("app");
    assertThat((String[]) app.get("nodelet.devices")).containsExactly("gpu.example.com/pool-a/gpu-0");
    assertThat((String[]) app.get("nodelet.devices.cdi")).containsExactly("k8s.gpu.example.com/device=gpu-0");
    assertThat((String[]) app.get("nodelet.device.0.cdiDeviceIds"))
        .containsExactly("k8s.gpu.example.com/device=gpu-0");
    assertThat(app.get("nodelet.device.0.claim")).isEqualTo("gpu");
    assertThat(app.get("nodelet.device.0.claimName")).isEqualTo("gpu-claim");
    assertThat(app.get("nodelet.device.0.request")).isEqualTo("req");
    assertThat(app.get("nodelet.device.0.driver")).isEqualTo(GPU);
    assertThat(app.get("nodelet.device.0.pool")).isEqualTo("pool-a");
    assertThat(app.get("nodelet.device.0.device")).isEqualTo("gpu-0");
    assertThat(app.get("nodelet.device.0.attribute.model")).isEqualTo("T4");
    assertThat(app.get("nodelet.device.0.attribute.index")).isEqualTo(0L);
    assertThat(configuration("other").get("nodelet.devices")).as("other names no claim").isNull();
    assertThat(driver.calls).containsExactly("prepare gpu-claim");
  }

  @Test
  void aFailingPrepareKeepsThePodWaitingWithTheReasonUntilTheRetrySucceeds() throws Exception {
    startManager();
    driver.fail.set(true);
    Pod pod = h.client.pods().inNamespace("default").resource(new PodBuilder(pod()).editSpec()
        .withNodeName(PodsHarness.NODE).endSpec().build()).create();
    allocate(pod);
    manager.podUpdated(pod);
    feed(pod);

    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
      ContainerStatus app = h.container("p", "app");
      assertThat(app.getState().getWaiting().getReason()).isEqualTo("ContainerCreating");
      assertThat(app.getState().getWaiting().getMessage()).startsWith(
          "failed to prepare resource claim \"gpu\" (ResourceClaim default/gpu-claim): ")
          .contains(GPU, "device busy");
    });
    assertThat(h.felix.context().getBundle("nodelet-pod:default/p/app")).isNull();
    assertThat(h.felix.context().getBundle("nodelet-pod:default/p/other")).isNull();

    driver.fail.set(false);
    awaitRunning();
    assertThat((String[]) configuration("app").get("nodelet.devices")).containsExactly(
        "gpu.example.com/pool-a/gpu-0");
  }

  @Test
  void deletingThePodWithdrawsItsDevicesAndTheClaimIsUnprepared() throws Exception {
    startManager();
    Pod pod = h.client.pods().inNamespace("default").resource(new PodBuilder(pod()).editSpec()
        .withNodeName(PodsHarness.NODE).endSpec().build()).create();
    allocate(pod);
    manager.podUpdated(pod);
    feed(pod);
    awaitRunning();
    Bundle bundle = h.felix.context().getBundle("nodelet-pod:default/p/app");
    assertThat(configuration("app").get("nodelet.devices")).isNotNull();

    Pod deleting = h.client.pods().inNamespace("default").withName("p").get();
    deleting.getMetadata().setDeletionTimestamp("2026-11-28T10:00:05Z");
    deleting.getMetadata().setDeletionGracePeriodSeconds(30L);
    h.runtime.podUpdated(deleting); // as the pod source delivers a pod being deleted, to both
    manager.podUpdated(deleting);
    h.idle();

    assertThat(bundle.getState()).isEqualTo(Bundle.UNINSTALLED);
    assertThat(new ConfigDelivery(h.felix.configurationAdmin).bound("nodelet-pod:default/p/app")).isNull();
    await().atMost(Duration.ofSeconds(10)).until(() -> driver.calls.contains("unprepare gpu-claim"));
    assertThat(manager.claims()).isEmpty();
  }

  @Test
  void aRunningPodKeepsItsDevicesAndConditionsWhileTheClaimManagerIsAway() throws Exception {
    startManager();
    Pod pod = h.client.pods().inNamespace("default").resource(new PodBuilder(pod()).editSpec()
        .withNodeName(PodsHarness.NODE).endSpec().build()).create();
    allocate(pod);
    manager.podUpdated(pod);
    feed(pod);
    awaitRunning();
    await().atMost(Duration.ofSeconds(10)).until(() -> readyToStart());

    h.claimStatus = null; // the claim manager stopped
    h.feed("p");
    assertThat(readyToStart()).as("PodReadyToStartContainers").isTrue();
    assertThat(h.container("p", "app").getState().getRunning()).isNotNull();
    assertThat((String[]) configuration("app").get("nodelet.devices")).containsExactly(
        "gpu.example.com/pool-a/gpu-0");
  }

  private boolean readyToStart() {
    return h.status("p").getConditions().stream().anyMatch(c -> c.getType().equals("PodReadyToStartContainers")
        && c.getStatus().equals("True"));
  }
}
