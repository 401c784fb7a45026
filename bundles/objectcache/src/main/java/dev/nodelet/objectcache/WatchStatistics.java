package dev.nodelet.objectcache;

/**
 * Counters of the watches a manager serves.
 *
 * @param watchers how many watches are open now
 * @param terminatedWatchers how many watches were closed because their consumer did not keep up
 * @param initialEvents how many initial events (current state or replayed changes) watches were given
 * @param queuedEvents how many events the open watches hold for their consumers now, all watches together (since 3.1)
 * @param longestQueue the most events one open watch holds for its consumer now; 0 without watches (since 3.1)
 * @since 1.1
 */
public record WatchStatistics(int watchers, long terminatedWatchers, long initialEvents, long queuedEvents,
    int longestQueue) {

  /**
   * Statistics without queue lengths, as managers built against version 3.0 of this package report them.
   *
   * @param watchers how many watches are open now
   * @param terminatedWatchers how many watches were closed because their consumer did not keep up
   * @param initialEvents how many initial events watches were given
   */
  public WatchStatistics(int watchers, long terminatedWatchers, long initialEvents) {
    this(watchers, terminatedWatchers, initialEvents, 0, 0);
  }
}
