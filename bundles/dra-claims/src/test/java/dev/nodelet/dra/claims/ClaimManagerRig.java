package dev.nodelet.dra.claims;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * What the claim manager's tests run on: the embedded API server and its client, a state directory of its own,
 * drivable time (a {@link ManualScheduler}: every step runs on the test's thread) and a test driver for {@link #GPU}.
 * Closing it closes the managers it started first, then the client and the server, and deletes the state directory.
 */
final class ClaimManagerRig implements AutoCloseable {

  static final String NODE = "node-a";
  static final String GPU = "gpu.example.com";

  final Path state;
  final EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
  final KubernetesClient client = server.newClient();
  final ManualScheduler scheduler = new ManualScheduler();
  final TestDriver gpu = new TestDriver(GPU);
  private final List<AutoCloseable> started = new ArrayList<>();

  ClaimManagerRig() {
    try {
      state = Files.createTempDirectory("claim-manager");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** @return a builder on this node, the state directory and drivable time */
  ClaimManager.Builder builder() {
    return ClaimManager.builder(client, NODE).stateDirectory(state).clock(scheduler.clock).executor(scheduler);
  }

  /** @return a manager with {@link #gpu} as its driver, started and its first work done */
  ClaimManager manager(UnaryOperator<ClaimManager.Builder> settings) {
    ClaimManager manager = settings.apply(builder()).build();
    manager.addDriver(gpu);
    return start(manager);
  }

  /** Starts the manager, runs its first work, and closes it with the rig. */
  ClaimManager start(ClaimManager manager) {
    closing(manager);
    manager.start();
    scheduler.runDue();
    return manager;
  }

  /** Closes {@code closeable} with the rig, before the API server. */
  <T extends AutoCloseable> T closing(T closeable) {
    started.add(closeable);
    return closeable;
  }

  /** @return the manager's claim of that name, or null */
  static ClaimInfo claim(ClaimManager manager, String name) {
    return manager.claims().stream().filter(c -> c.name().equals(name)).findFirst().orElse(null);
  }

  /**
   * @param skip the node operations the device skips (KEP-5945)
   * @return a device of the driver in pool {@code pool}, for request {@code req}
   */
  static DeviceRequestAllocationResult result(String driver, String device, String... skip) {
    DeviceRequestAllocationResult r = new DeviceRequestAllocationResultBuilder().withDriver(driver).withPool("pool")
        .withDevice(device).withRequest("req").build();
    if (skip.length > 0) {
      r.setAdditionalProperty("skipNodeOperations", List.of(skip)); // not in fabric8 7.5.2's model
    }
    return r;
  }

  /** As {@link #allocated(String, String, String, String, DeviceRequestAllocationResult...)}, entry {@code entry}. */
  Pod allocated(String claimName, String podName, String podUid, DeviceRequestAllocationResult... results) {
    return allocated(claimName, podName, podUid, "entry", results);
  }

  /**
   * Creates a claim with one request {@code req} of class {@code gpu}, allocated with the devices and reserved for
   * the pod, as the scheduler leaves it.
   *
   * @return the pod (not on the API server), whose entry {@code entry} names the claim
   */
  private Pod allocated(String claimName, String podName, String podUid, String entry,
      DeviceRequestAllocationResult... results) {
    ResourceClaim claim = client.resources(ResourceClaim.class).inNamespace("default").resource(
        new ResourceClaimBuilder().withNewMetadata().withNamespace("default").withName(claimName).endMetadata()
            .withNewSpec().withNewDevices().addNewRequest().withName("req").withNewExactly()
            .withDeviceClassName("gpu").endExactly().endRequest().endDevices().endSpec().build()).create();
    claim.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addToResults(results)
        .endDevices().endAllocation().addNewReservedFor().withResource("pods").withName(podName).withUid(podUid)
        .endReservedFor().build());
    client.resources(ResourceClaim.class).inNamespace("default").resource(claim).updateStatus();
    return new PodBuilder().withNewMetadata().withNamespace("default").withName(podName).withUid(podUid)
        .withResourceVersion("1").endMetadata().withNewSpec().withNodeName(NODE).addNewResourceClaim()
        .withName(entry).withResourceClaimName(claimName).endResourceClaim().endSpec().build();
  }

  /** @return pod-a (uid-a), whose entry {@code gpu} names claim-a: device dev-a of {@link #GPU} */
  Pod allocatedPod() {
    return allocated("claim-a", "pod-a", "uid-a", "gpu", result(GPU, "dev-a"));
  }

  @Override
  public void close() throws Exception {
    try {
      for (AutoCloseable closeable : started) {
        closeable.close();
      }
    } finally {
      client.close();
      server.close();
      try (Stream<Path> files = Files.walk(state)) {
        for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(file);
        }
      }
    }
  }
}
