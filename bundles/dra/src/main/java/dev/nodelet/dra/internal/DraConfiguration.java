package dev.nodelet.dra.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** The configuration of PID {@code dev.nodelet.dra}; {@code _} in a method name is {@code .} in the key. */
@ObjectClassDefinition(
    name = "Nodelet DRA node controller",
    description = "Publishes the devices of DRA drivers as resource.k8s.io/v1 ResourceSlices of this node. Durations"
        + " are at most 30 days; a change with a value out of range is refused and the last good configuration"
        + " stays in force.")
public @interface DraConfiguration {

  @AttributeDefinition(name = "Grace period (s)", min = "0",
      description = "How long the slices of a driver that went away stay published, and how long the controller"
          + " waits at start-up for the drivers of existing slices to register.")
  long grace_period_seconds() default 30;

  @AttributeDefinition(name = "Retry base delay (ms)", min = "1",
      description = "First delay before a failed sync of a driver is retried; doubles with every failure.")
  long rate_limit_base_delay_millis() default 5;

  @AttributeDefinition(name = "Retry max delay (s)", min = "1",
      description = "Longest delay before a failed sync of a driver is retried.")
  long rate_limit_max_delay_seconds() default 1000;

  @AttributeDefinition(name = "Sync rate (per second)",
      description = "Refill rate of the token bucket that limits retried syncs of all drivers together.")
  double rate_limit_qps() default 10;

  @AttributeDefinition(name = "Sync burst", min = "1",
      description = "Size of the token bucket that limits retried syncs of all drivers together.")
  int rate_limit_burst() default 100;

  @AttributeDefinition(name = "Monitor backoff initial delay (s)", min = "1",
      description = "Delay before a failed driver stream is opened again the second time, plus jitter.")
  long monitor_backoff_initial_seconds() default 5;

  @AttributeDefinition(name = "Monitor backoff max delay (s)", min = "1",
      description = "Longest delay before a failed driver stream is opened again.")
  long monitor_backoff_max_seconds() default 180;

  @AttributeDefinition(name = "Monitor backoff jitter factor", min = "0",
      description = "Random extra delay, as a factor of the current delay.")
  double monitor_backoff_jitter_factor() default 2.0;

  @AttributeDefinition(name = "Resync period (s)", min = "0",
      description = "How often every driver is checked against the slices on the API server; 0 for never.")
  long resync_period_seconds() default 600;

  @AttributeDefinition(name = "Devices per slice", min = "1", max = "128",
      description = "Pools with more devices are split into several slices; the API allows at most 128.")
  int max_devices_per_slice() default 128;
}
