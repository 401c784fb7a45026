package dev.nodelet.store.watch.internal;

import static dev.nodelet.store.watch.internal.StoreContext.LOG;
import static dev.nodelet.store.watch.internal.StoreContext.close;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * What the strategy's timer does for one store: it opens the watches that registrations queued, refreshes the coarse
 * clock of access times every second, and runs the idle sweep, which stops the watches of items not read for longer
 * than the maximum idle time. With a zero sweep interval (manual ticks) only {@link #sweep()} does the last two.
 */
final class StoreTimer<T extends HasMetadata> {

  /**
   * How often the timer opens the watches that registrations queued and no get has opened. A registration does not
   * wake the timer: waking a parked thread is a system call that alone would cost it tens of microseconds.
   */
  static final long OPEN_INTERVAL_MILLIS = 100;

  private final StoreContext<T> store;
  private final ItemWatches<T> watches;
  private final WatchSlots<T> slots;
  private final List<ScheduledFuture<?>> ticks = new ArrayList<>();

  StoreTimer(StoreContext<T> store, ItemWatches<T> watches, WatchSlots<T> slots) {
    this.store = store;
    this.watches = watches;
    this.slots = slots;
  }

  /** Schedules the store's work on the timer. */
  void start() {
    long sweepMillis = store.settings.sweepInterval().toMillis();
    if (sweepMillis > 0) {
      ticks.add(store.timer.scheduleWithFixedDelay(this::sweep, sweepMillis, sweepMillis, TimeUnit.MILLISECONDS));
      ticks.add(store.timer.scheduleWithFixedDelay(() -> store.now = store.clock.millis(), 1, 1, TimeUnit.SECONDS));
    }
    ticks.add(store.timer.scheduleWithFixedDelay(watches::openQueued, OPEN_INTERVAL_MILLIS, OPEN_INTERVAL_MILLIS,
        TimeUnit.MILLISECONDS));
  }

  /**
   * Stops the watches of items that are synced and have not been read for longer than the maximum idle time, and
   * takes the clock's time for the access times that follow; opens what is queued and the promoted watches whose
   * grace has passed first.
   */
  void sweep() {
    long current = store.clock.millis();
    store.now = current;
    watches.openQueued();
    slots.openPromoted();
    long maxIdle = store.settings.maxIdleTime().toMillis();
    store.forEach(item -> {
      if (item.stopIfIdle(current, maxIdle)) {
        close(item.takeReflector());
        store.settings.budget().release(item);
        LOG.debug("Stopped watching {} {}/{}: not read for {}", store.type, item.namespace, item.name,
            store.settings.maxIdleTime());
      }
    });
  }

  /** Cancels the store's scheduled work. */
  void cancel() {
    ticks.forEach(tick -> tick.cancel(false));
  }
}
