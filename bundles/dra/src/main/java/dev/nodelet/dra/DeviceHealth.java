package dev.nodelet.dra;

import dev.nodelet.records.RecordChecks;
import java.time.Duration;
import java.time.Instant;

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
    RecordChecks.requireNonNull(DeviceHealth.class, poolName, deviceName, health, lastUpdated, timeout, message);
  }
}
