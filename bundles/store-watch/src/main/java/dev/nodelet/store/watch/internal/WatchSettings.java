package dev.nodelet.store.watch.internal;

import java.time.Duration;

/**
 * The options of a watch store, already validated.
 *
 * @param maxIdleTime how long an item may go unread before its watch stops
 * @param syncWait how long a get waits for an item's first list
 * @param sweepInterval how often idle items are looked for; zero when the owner sweeps (manual ticks)
 */
public record WatchSettings(Duration maxIdleTime, Duration syncWait, Duration sweepInterval) {
}
