package dev.nodelet.cache.core.internal.watch;

import java.time.Duration;
import java.util.Objects;

/**
 * The tunables of a {@link WatchHub}; {@link #DEFAULTS} are the apiserver's values where it has one.
 *
 * @param bookmarkFrequency how often a watcher that takes bookmarks gets one (1 minute)
 * @param maxDispatchBudget the most the dispatcher may wait for full watchers in one round (100 ms)
 * @param budgetRefillPerSecond how much of that budget comes back per second (50 ms)
 * @param tickPeriod how often the hub's timer sends due bookmarks and ends watches past their deadline (1 s); zero
 *     for no timer thread: the owner then calls {@link WatchHub#tick()} itself
 * @param defaultBufferSize the input and result buffer size of a watch that does not ask for one (100)
 * @param historySize how many past changes the hub remembers for watches that start at a resource version (100)
 * @param consumerLinger how long a watch's consumer that is in a stream of events waits for the next ones without
 *     being signalled, so that it takes them in batches instead of being woken per event (2 ms; no apiserver
 *     counterpart: there a goroutine per watcher does not cost a thread wake-up per event); zero to signal at every
 *     wait
 */
public record WatchHubSettings(Duration bookmarkFrequency, Duration maxDispatchBudget,
    Duration budgetRefillPerSecond, Duration tickPeriod, int defaultBufferSize, int historySize,
    Duration consumerLinger) {

  /** The defaults. */
  public static final WatchHubSettings DEFAULTS = new WatchHubSettings(Duration.ofMinutes(1), Duration.ofMillis(100),
      Duration.ofMillis(50), Duration.ofSeconds(1), 100, 100, Duration.ofMillis(2));

  /** Checks every value and names the one that is wrong. */
  public WatchHubSettings {
    requirePositive("bookmarkFrequency", bookmarkFrequency);
    Objects.requireNonNull(maxDispatchBudget, "maxDispatchBudget");
    Objects.requireNonNull(budgetRefillPerSecond, "budgetRefillPerSecond");
    if (maxDispatchBudget.isNegative() || budgetRefillPerSecond.isNegative()) {
      throw new IllegalArgumentException("dispatch budget must not be negative: " + maxDispatchBudget + ", "
          + budgetRefillPerSecond);
    }
    Objects.requireNonNull(tickPeriod, "tickPeriod");
    if (tickPeriod.isNegative()) {
      throw new IllegalArgumentException("tickPeriod must not be negative: " + tickPeriod);
    }
    if (defaultBufferSize < 1) {
      throw new IllegalArgumentException("defaultBufferSize must be positive: " + defaultBufferSize);
    }
    if (historySize < 0) {
      throw new IllegalArgumentException("historySize must not be negative: " + historySize);
    }
    Objects.requireNonNull(consumerLinger, "consumerLinger");
    if (consumerLinger.isNegative()) {
      throw new IllegalArgumentException("consumerLinger must not be negative: " + consumerLinger);
    }
  }

  private static void requirePositive(String name, Duration value) {
    Objects.requireNonNull(value, name);
    if (value.isZero() || value.isNegative()) {
      throw new IllegalArgumentException(name + " must be positive: " + value);
    }
  }

  /**
   * @param tickPeriod the timer period; zero for no timer thread
   * @return these settings with another timer period
   */
  public WatchHubSettings withTickPeriod(Duration tickPeriod) {
    return new WatchHubSettings(bookmarkFrequency, maxDispatchBudget, budgetRefillPerSecond, tickPeriod,
        defaultBufferSize, historySize, consumerLinger);
  }
}
