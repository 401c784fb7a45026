package dev.nodelet.dra.claims;

import dev.nodelet.dra.DeviceHealth;
import java.time.Instant;

/**
 * The health of one device as last reported by its driver; {@link DeviceHealth.Health#UNKNOWN} once the report's
 * timeout passed without a new one.
 *
 * @param driver the driver
 * @param pool the device's pool
 * @param device the device's name
 * @param health the health now
 * @param message the driver's detail, at most 1024 characters
 * @param received when the report arrived
 */
public record DeviceHealthInfo(String driver, String pool, String device, DeviceHealth.Health health, String message,
    Instant received) {
}
