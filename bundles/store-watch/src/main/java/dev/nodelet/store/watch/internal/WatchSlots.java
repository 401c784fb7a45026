package dev.nodelet.store.watch.internal;

import static dev.nodelet.store.watch.internal.StoreContext.LOG;
import static dev.nodelet.store.watch.internal.StoreContext.close;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * One store's side of the strategy's {@link WatchBudget}: an item that starts takes a watch slot or is polled (served
 * by GETs, see {@link PolledGets}); a polled item read again may take the slot of a colder one, and opens its watch
 * once that one's has ended; freed slots go to the polled items most recently read.
 */
final class WatchSlots<T extends HasMetadata> {

  private final StoreContext<T> store;
  private final ItemWatches<T> watches;
  /** Polled items that took a colder one's slot, opened once its watch has ended ({@link #openPromoted}). */
  private final Queue<Promoted<T>> promoted = new ConcurrentLinkedQueue<>();

  WatchSlots(StoreContext<T> store, ItemWatches<T> watches) {
    this.store = store;
    this.watches = watches;
  }

  /** Starts the item's list+watch cycle unless it runs: queued to open if it gets a slot, else polled. */
  void start(WatchItem<T> item) {
    int run = item.start();
    if (run != 0 && admit(item)) {
      watches.openLater(item, run);
    }
  }

  /** Takes a watch slot for an item that started; without room, it is served by GETs (polled) instead. */
  boolean admit(WatchItem<T> item) {
    if (store.settings.budget().admit(item, () -> demote(item))) {
      return true;
    }
    if (item.demote(store.clock.millis())) {
      store.recorder.toPolled.inc();
      close(item.takeReflector());
    }
    return false;
  }

  /** Ends the watch of an item that gave its slot to another: GETs serve it from now on. */
  private void demote(WatchItem<T> item) {
    if (item.demote(store.clock.millis())) {
      store.recorder.toPolled.inc();
      close(item.takeReflector());
      LOG.debug("Polling {} {}/{}: its watch went to a more recently used object", store.type, item.namespace,
          item.name);
    }
  }

  /** A polled item read again: back to a watch if the budget gives it a slot (see {@link WatchBudget}). */
  void promote(WatchItem<T> item, long previousRead) {
    WatchBudget.Grant grant = store.settings.budget().promote(item, previousRead, () -> demote(item));
    if (!grant.granted()) {
      return;
    }
    if (grant.demote() != null) {
      grant.demote().run();
    }
    if (store.settings.budget().due(grant.openAt())) {
      watchAgain(item);
      return;
    }
    // polled until the demoted watch has ended on the server too
    promoted.add(new Promoted<>(item, grant.openAt()));
    if (!store.settings.sweepInterval().isZero()) {
      openPromotedLater(grant.openAt());
    }
  }

  /** A polled item holding a slot, and when (clock millis) it may open its watch. */
  private record Promoted<T extends HasMetadata>(WatchItem<T> item, long openAt) {
  }

  /** Has the timer run {@link #openPromoted} at {@code openAt} by the clock. */
  private void openPromotedLater(long openAt) {
    try {
      store.timer.schedule(this::openPromoted, Math.max(1, openAt - store.clock.millis()), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // the strategy is closed: closing released every slot
    }
  }

  /**
   * Opens the watches of the promoted items whose grace has passed on the clock; on the timer, and at every sweep
   * (with manual ticks, the owner's tick decides when the grace has passed).
   */
  void openPromoted() {
    long next = Long.MAX_VALUE;
    for (Iterator<Promoted<T>> it = promoted.iterator(); it.hasNext(); ) {
      Promoted<T> entry = it.next();
      if (store.settings.budget().due(entry.openAt())) {
        it.remove();
        watchAgain(entry.item());
      } else {
        next = Math.min(next, entry.openAt());
      }
    }
    if (next != Long.MAX_VALUE && !store.settings.sweepInterval().isZero()) {
      openPromotedLater(next); // the timer ran before the clock reached it
    }
  }

  /** A polled item that holds a slot opens its watch, unless it was dropped or the store closed meanwhile. */
  private void watchAgain(WatchItem<T> item) {
    if (store.stopped || !item.unpoll()) {
      store.settings.budget().release(item);
      return;
    }
    store.recorder.toWatched.inc();
    LOG.debug("Watching {} {}/{} again: it is read often", store.type, item.namespace, item.name);
    start(item);
  }

  /** Moves polled items back to watches while the budget has room, most recently read first. */
  void fill() {
    if (store.stopped) {
      return;
    }
    List<WatchItem<T>> polledItems = new ArrayList<>();
    store.forEach(item -> {
      if (item.polled != null) {
        polledItems.add(item);
      }
    });
    polledItems.sort(Comparator.comparingLong(WatchItem<T>::lastUsed).reversed());
    for (WatchItem<T> item : polledItems) {
      if (!store.settings.budget().admit(item, () -> demote(item))) {
        return;
      }
      if (item.unpoll()) {
        store.recorder.toWatched.inc();
        start(item);
      } else {
        store.settings.budget().release(item);
      }
    }
  }

  /** Forgets the promotions waiting for their grace: the store closed and released every slot. */
  void clear() {
    promoted.clear();
  }
}
