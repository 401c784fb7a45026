package dev.nodelet.dra.runtime;

import java.time.Duration;

/**
 * The tunables of {@link NodeResources}; {@link #DEFAULTS} are the kubelet's values.
 *
 * @param gracePeriod how long the slices of a driver that went away (or, at start-up, never came) stay
 * @param rateLimitBaseDelay first delay of a failed sync, doubled per failure
 * @param rateLimitMaxDelay cap of the per-driver delay
 * @param rateLimitQps refill rate of the token bucket shared by all drivers
 * @param rateLimitBurst size of that token bucket
 * @param monitorBackoffInitial first delay between attempts to monitor a driver (plus jitter)
 * @param monitorBackoffMax cap of that delay
 * @param monitorBackoffJitter jitter factor of that delay
 * @param resyncPeriod how often the informer replays its slices, so drift is repaired; zero for never
 * @param maxDevicesPerSlice devices per slice, at most the API limit of 128
 */
public record ControllerOptions(Duration gracePeriod, Duration rateLimitBaseDelay, Duration rateLimitMaxDelay,
    double rateLimitQps, int rateLimitBurst, Duration monitorBackoffInitial, Duration monitorBackoffMax,
    double monitorBackoffJitter, Duration resyncPeriod, int maxDevicesPerSlice) {

  /** The API's limit of devices in one ResourceSlice. */
  public static final int MAX_DEVICES_PER_SLICE = 128;

  public static final ControllerOptions DEFAULTS = new ControllerOptions(Duration.ofSeconds(30),
      Duration.ofMillis(5), Duration.ofSeconds(1000), 10, 100, Duration.ofSeconds(5), Duration.ofSeconds(180), 2.0,
      Duration.ofMinutes(10), MAX_DEVICES_PER_SLICE);

  /** Checks every value; the message names the option at fault. */
  public ControllerOptions {
    require(!gracePeriod.isNegative(), "grace period must not be negative: " + gracePeriod);
    require(!rateLimitBaseDelay.isNegative() && !rateLimitBaseDelay.isZero(),
        "rate limit base delay must be positive: " + rateLimitBaseDelay);
    require(rateLimitMaxDelay.compareTo(rateLimitBaseDelay) >= 0,
        "rate limit max delay must be at least the base delay: " + rateLimitMaxDelay);
    require(rateLimitQps > 0, "rate limit qps must be positive: " + rateLimitQps);
    require(rateLimitBurst >= 1, "rate limit burst must be at least 1: " + rateLimitBurst);
    require(!monitorBackoffInitial.isNegative() && !monitorBackoffInitial.isZero(),
        "monitor backoff initial delay must be positive: " + monitorBackoffInitial);
    require(monitorBackoffMax.compareTo(monitorBackoffInitial) >= 0,
        "monitor backoff max delay must be at least the initial delay: " + monitorBackoffMax);
    require(monitorBackoffJitter >= 0, "monitor backoff jitter factor must not be negative: "
        + monitorBackoffJitter);
    require(!resyncPeriod.isNegative(), "resync period must not be negative: " + resyncPeriod);
    require(maxDevicesPerSlice >= 1 && maxDevicesPerSlice <= MAX_DEVICES_PER_SLICE,
        "max devices per slice must be 1.." + MAX_DEVICES_PER_SLICE + ": " + maxDevicesPerSlice);
  }

  private static void require(boolean condition, String message) {
    if (!condition) {
      throw new IllegalArgumentException(message);
    }
  }
}
