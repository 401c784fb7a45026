package dev.nodelet.dra.internal;

import java.time.Duration;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/**
 * The tunables of the {@link NodeResourcesController}; {@link #DEFAULTS} are the kubelet's values.
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

  public static final ControllerOptions DEFAULTS = new ControllerOptions(Duration.ofSeconds(30),
      Duration.ofMillis(5), Duration.ofSeconds(1000), 10, 100, Duration.ofSeconds(5), Duration.ofSeconds(180), 2.0,
      Duration.ofMinutes(10), SlicePlan.MAX_DEVICES_PER_SLICE);

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
    require(maxDevicesPerSlice >= 1 && maxDevicesPerSlice <= SlicePlan.MAX_DEVICES_PER_SLICE,
        "max devices per slice must be 1.." + SlicePlan.MAX_DEVICES_PER_SLICE + ": " + maxDevicesPerSlice);
  }

  /** The longest duration any option takes: thirty days, far below what the clock arithmetic can hold. */
  static final long MAX_SECONDS = 30L * 24 * 60 * 60;

  /**
   * The options of a configuration of PID {@code dev.nodelet.dra}.
   *
   * @throws IllegalArgumentException naming the first key whose value cannot be used, and why
   */
  static ControllerOptions from(DraConfiguration config) {
    long grace = whole("grace.period.seconds", config::grace_period_seconds, 0, MAX_SECONDS);
    long baseMillis = whole("rate.limit.base.delay.millis", config::rate_limit_base_delay_millis, 1,
        MAX_SECONDS * 1000);
    long maxDelay = whole("rate.limit.max.delay.seconds", config::rate_limit_max_delay_seconds, 1, MAX_SECONDS);
    if (maxDelay * 1000 < baseMillis) {
      throw new IllegalArgumentException("rate.limit.max.delay.seconds: must be at least rate.limit.base.delay.millis"
          + " (" + baseMillis + " ms), was " + maxDelay + " s");
    }
    double qps = decimal("rate.limit.qps", config::rate_limit_qps, false, 1_000_000);
    long burst = whole("rate.limit.burst", config::rate_limit_burst, 1, 1_000_000);
    long initial = whole("monitor.backoff.initial.seconds", config::monitor_backoff_initial_seconds, 1, MAX_SECONDS);
    long max = whole("monitor.backoff.max.seconds", config::monitor_backoff_max_seconds, 1, MAX_SECONDS);
    if (max < initial) {
      throw new IllegalArgumentException("monitor.backoff.max.seconds: must be at least "
          + "monitor.backoff.initial.seconds (" + initial + "), was " + max);
    }
    double jitter = decimal("monitor.backoff.jitter.factor", config::monitor_backoff_jitter_factor, true, 100);
    long resync = whole("resync.period.seconds", config::resync_period_seconds, 0, MAX_SECONDS);
    long devices = whole("max.devices.per.slice", config::max_devices_per_slice, 1,
        SlicePlan.MAX_DEVICES_PER_SLICE);
    return new ControllerOptions(Duration.ofSeconds(grace), Duration.ofMillis(baseMillis),
        Duration.ofSeconds(maxDelay), qps, (int) burst, Duration.ofSeconds(initial), Duration.ofSeconds(max), jitter,
        Duration.ofSeconds(resync), (int) devices);
  }

  private static long whole(String key, LongSupplier read, long min, long max) {
    long value;
    try {
      value = read.getAsLong();
    } catch (RuntimeException e) {
      // DS and the converter fail on the first read of a value they cannot convert
      throw new IllegalArgumentException(key + ": not a whole number (" + e.getMessage() + ")");
    }
    if (value < min || value > max) {
      throw new IllegalArgumentException(key + ": must be between " + min + " and " + max + ", was " + value);
    }
    return value;
  }

  private static double decimal(String key, DoubleSupplier read, boolean zeroAllowed, double max) {
    double value;
    try {
      value = read.getAsDouble();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(key + ": not a number (" + e.getMessage() + ")");
    }
    if (Double.isNaN(value) || value > max || value < 0 || (!zeroAllowed && value == 0)) {
      throw new IllegalArgumentException(key + ": must be " + (zeroAllowed ? "between 0" : "above 0 and at most")
          + (zeroAllowed ? " and " : " ") + max + ", was " + value);
    }
    return value;
  }

  private static void require(boolean condition, String message) {
    if (!condition) {
      throw new IllegalArgumentException(message);
    }
  }
}
