package dev.nodelet.store.watch.internal;

import java.time.Duration;
import java.util.function.Supplier;

/**
 * The options of a watch store, already validated.
 *
 * @param maxIdleTime how long an item may go unread before its watch stops
 * @param syncWait how long a get waits for an item's first list
 * @param sweepInterval how often idle items are looked for; zero when the owner sweeps (manual ticks)
 * @param budget which items may hold a watch, shared by the stores of one strategy
 * @param polledTtl how long the copy of an item the budget serves by GETs stays fresh, asked on every such get
 */
public record WatchSettings(Duration maxIdleTime, Duration syncWait, Duration sweepInterval, WatchBudget budget,
    Supplier<Duration> polledTtl) {

  /** The node annotation whose whole seconds replace the time-to-live of polled copies, as for the TTL store. */
  public static final String TTL_ANNOTATION = "node.alpha.kubernetes.io/ttl";

  /** The default time-to-live of polled copies, the kubelet's default TTL. */
  public static final Duration DEFAULT_POLLED_TTL = Duration.ofMinutes(1);

  /** Options with no watch budget: every referenced object is watched. */
  public WatchSettings(Duration maxIdleTime, Duration syncWait, Duration sweepInterval) {
    this(maxIdleTime, syncWait, sweepInterval, new WatchBudget(0, System::currentTimeMillis), () -> DEFAULT_POLLED_TTL);
  }
}
