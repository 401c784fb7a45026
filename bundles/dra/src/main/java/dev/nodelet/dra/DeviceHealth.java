package dev.nodelet.dra;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * A driver's report on the health of one device, as in the kubelet's {@code DRAResourceHealth} API.
 *
 * @param poolName the pool of the device
 * @param deviceName the device's name in the pool
 * @param health the health the driver reports
 * @param lastUpdated when the driver checked the device
 * @param timeout how long the report stays valid; without a new report the device is {@link Health#UNKNOWN}
 *     afterwards
 * @param message a detail for people, possibly empty
 * @since 1.2
 */
public record DeviceHealth(String poolName, String deviceName, Health health, Instant lastUpdated, Duration timeout,
    String message) {

  /** The health of a device. */
  public enum Health {
    UNKNOWN, HEALTHY, UNHEALTHY
  }

  /** Rejects {@code null}. */
  public DeviceHealth {
    Objects.requireNonNull(poolName, "poolName");
    Objects.requireNonNull(deviceName, "deviceName");
    Objects.requireNonNull(health, "health");
    Objects.requireNonNull(lastUpdated, "lastUpdated");
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(message, "message");
  }
}
