package dev.nodelet.dra;

import java.util.List;
import java.util.Objects;

/**
 * A device that a driver prepared for a claim.
 *
 * @param requestNames the requests of the claim that the device was allocated for; empty: every request
 * @param poolName the pool of the device
 * @param deviceName the device's name in the pool
 * @param cdiDeviceIds the fully qualified CDI device IDs that the container runtime injects, such as
 *     {@code k8s.gpu.example.com/device=gpu-0}
 * @param shareId the share of a device with consumable capacity, or {@code null}
 * @since 1.2
 */
public record PreparedDevice(List<String> requestNames, String poolName, String deviceName, List<String> cdiDeviceIds,
    String shareId) {

  /** Copies the lists; rejects {@code null} except for {@code shareId}. */
  public PreparedDevice {
    requestNames = List.copyOf(requestNames);
    Objects.requireNonNull(poolName, "poolName");
    Objects.requireNonNull(deviceName, "deviceName");
    cdiDeviceIds = List.copyOf(cdiDeviceIds);
  }
}
