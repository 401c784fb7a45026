package dev.nodelet.objectcache;

/**
 * Counters of the watches a manager serves.
 *
 * @param watchers how many watches are open now
 * @param terminatedWatchers how many watches were closed because their consumer did not keep up
 * @param initialEvents how many initial events (current state or replayed changes) watches were given
 * @since 1.1
 */
public record WatchStatistics(int watchers, long terminatedWatchers, long initialEvents) {
}
