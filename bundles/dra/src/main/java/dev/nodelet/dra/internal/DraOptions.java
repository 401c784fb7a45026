package dev.nodelet.dra.internal;

import dev.nodelet.configuration.ConfigurationValues;
import dev.nodelet.dra.runtime.ControllerOptions;
import java.time.Duration;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;

/** The controller's options from a configuration of PID {@code dev.nodelet.dra}. */
final class DraOptions {

  private DraOptions() {}

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
        ControllerOptions.MAX_DEVICES_PER_SLICE);
    return new ControllerOptions(Duration.ofSeconds(grace), Duration.ofMillis(baseMillis),
        Duration.ofSeconds(maxDelay), qps, (int) burst, Duration.ofSeconds(initial), Duration.ofSeconds(max), jitter,
        Duration.ofSeconds(resync), (int) devices);
  }

  private static long whole(String key, LongSupplier read, long min, long max) {
    return ConfigurationValues.within(key, read, min, max, "");
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

}
