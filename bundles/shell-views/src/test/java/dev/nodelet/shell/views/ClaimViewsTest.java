package dev.nodelet.shell.views;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.PreparedDevice;
import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimStatus;
import dev.nodelet.dra.claims.ContainerDevices;
import dev.nodelet.dra.claims.DeviceHealthInfo;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ClaimViewsTest {

  /** A claim manager's answers as plain values: what the text is made of. */
  private record Status(List<ClaimInfo> claims, List<ContainerDevices> containers, List<DeviceHealthInfo> health,
      Optional<String> checkpointProblem) implements ClaimStatus {
  }

  @Test
  void nothingToShow() {
    assertThat(ClaimViews.claims(new Status(List.of(), List.of(), List.of(), Optional.empty())))
        .isEqualTo("no claims\n");
  }

  /**
   * A container entry that cannot get its devices has its error on a line of its own below it, as a claim has; an
   * entry that needs no devices (its template produced no claim) has neither CDI IDs nor an error.
   */
  @Test
  void claimsThenContainersThenHealth() {
    Instant retry = Instant.parse("2026-01-02T03:04:05Z");
    ClaimInfo prepared = new ClaimInfo("default", "claim-gpu", "uid-1", ClaimInfo.State.PREPARED,
        List.of("default/pod-1"), Map.of("gpu.example.com", List.of(new PreparedDevice(List.of("req"), "pool",
            "gpu-0", List.of("k8s.gpu.example.com/device=claim-gpu-dev"), null))), null, null);
    ClaimInfo failing = new ClaimInfo("default", "claim-nic", "", ClaimInfo.State.PREPARING, List.of("default/pod-1"),
        Map.of(), "driver nic.example.com is not registered", retry);
    ContainerDevices main = new ContainerDevices("default", "pod-1", "main", "entry-claim-nic", "req",
        List.of("k8s.nic.example.com/device=claim-nic-dev"));
    ContainerDevices sidecar = new ContainerDevices("default", "pod-1", "sidecar", "entry-claim-gpu", null, List.of());
    ContainerDevices init = new ContainerDevices("default", "pod-1", "init", "entry-claim-nic", "req", List.of(),
        "ResourceClaim default/claim-nic is not prepared (PREPARING): driver nic.example.com is not registered");
    ContainerDevices fromTemplate = new ContainerDevices("default", "pod-2", "main", "gpu", null, List.of(),
        "ResourceClaim not created yet for entry gpu of pod pod-2");
    DeviceHealthInfo health = new DeviceHealthInfo("gpu.example.com", "pool", "gpu-0", DeviceHealth.Health.UNKNOWN,
        "", retry);

    assertThat(ClaimViews.claims(new Status(List.of(prepared, failing), List.of(main, sidecar, init, fromTemplate),
        List.of(health),
        Optional.of("moved aside: not JSON"))).lines()).containsExactly(
        "checkpoint: moved aside: not JSON",
        "default/claim-gpu  PREPARED  uid=uid-1  pods=default/pod-1",
        "  gpu.example.com/pool/gpu-0  requests=req  cdi=k8s.gpu.example.com/device=claim-gpu-dev",
        "default/claim-nic  PREPARING  uid=-  pods=default/pod-1",
        "  error: driver nic.example.com is not registered (retry at 2026-01-02T03:04:05Z)",
        "container default/pod-1/main  claim=entry-claim-nic/req  cdi=k8s.nic.example.com/device=claim-nic-dev",
        "container default/pod-1/sidecar  claim=entry-claim-gpu  cdi=-",
        "container default/pod-1/init  claim=entry-claim-nic/req  cdi=-",
        "  error: ResourceClaim default/claim-nic is not prepared (PREPARING): driver nic.example.com is not"
            + " registered",
        "container default/pod-2/main  claim=gpu  cdi=-",
        "  error: ResourceClaim not created yet for entry gpu of pod pod-2",
        "health gpu.example.com/pool/gpu-0  UNKNOWN");
  }

  /** A driver's error that spans lines stays on the entry's one error line. */
  @Test
  void aContainerErrorIsOneLine() {
    ContainerDevices failed = new ContainerDevices("default", "pod-1", "main", "gpu", null, List.of(),
        "ResourceClaim default/claim-a is not prepared (FAILED): NodePrepareResources: device busy\n"
            + "\tgpu-0 is held by pod-0\n");

    assertThat(ClaimViews.claims(new Status(List.of(), List.of(failed), List.of(), Optional.empty())))
        .isEqualTo("no claims\n"
            + "container default/pod-1/main  claim=gpu  cdi=-\n"
            + "  error: ResourceClaim default/claim-a is not prepared (FAILED): NodePrepareResources: device busy"
            + " gpu-0 is held by pod-0\n");
  }
}
