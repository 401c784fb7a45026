package dev.nodelet.store.watch.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * Which items of one strategy's stores may hold a watch ({@code max.watches}): the items that hold a slot, and who
 * gives a slot back when another item needs it. With no budget (0) every item gets a slot, as without this class.
 *
 * <p>An item asks for a slot when its watch is to start; without room it is served by GETs (polled). A polled item
 * read again takes a slot when there is room, or the slot of the least recently used watched item if that item was
 * last used before the polled item's previous read: it was read again sooner than the watched item was, so it is the
 * hotter one. Items read in a steady round therefore do not trade slots on every read.
 *
 * <p>Slots are counted here, watches are closed by the owner of the item: a victim is handed back and demoted
 * outside this lock, since demoting takes the locks of the item (and another store's item may be the victim).
 *
 * <p>A watch that ends keeps counting for {@link #CLOSE_GRACE}: closing a watch only starts its end (a connection's
 * FIN, a stream's RST_STREAM) and the HTTP clients confirm nothing of the server's side, which may see the end after
 * the next watch has opened. So a slot freed by a release is not admitted again until then, and an item that takes
 * a colder one's slot opens its watch only once the grace has passed ({@link Grant#openAt()}), polled meanwhile. The
 * grace runs on the strategy's clock, so that a test which drives the clock decides when it has passed.
 */
public final class WatchBudget {

  /** The most a budget can be: beyond, one node watching that many objects is not a sensible setting. */
  public static final int MAX = 1_000_000;

  /** How long an ended watch still counts: the time its end takes to reach and be handled by the API server. */
  public static final long CLOSE_GRACE_MILLIS = 250;

  /** An item that holds a slot, and how its owner demotes it to polled. */
  private record Holder(WatchItem<?> item, Runnable demote) {
  }

  // guarded by this
  private int max;
  private final Map<WatchItem<?>, Holder> holders = new IdentityHashMap<>();
  /** When each watch ended within the last {@link #CLOSE_GRACE_MILLIS}, oldest first, in clock millis. */
  private final Deque<Long> closing = new ArrayDeque<>();
  private final LongSupplier millis;

  /**
   * @param max the most items holding a watch at once; 0 for no budget
   * @param millis the strategy's clock, in milliseconds
   */
  public WatchBudget(int max, LongSupplier millis) {
    this.max = check(max);
    this.millis = Objects.requireNonNull(millis, "millis");
  }

  private static int check(int max) {
    if (max < 0 || max > MAX) {
      throw new IllegalArgumentException("maxWatches must be between 0 (no budget) and " + MAX + ", was " + max);
    }
    return max;
  }

  /**
   * A slot for an item whose watch is to start, if there is room.
   *
   * @param demote what ends the item's watch and serves it by GETs, should another item take its slot
   * @return true if the item holds a slot (also if it held one already)
   */
  synchronized boolean admit(WatchItem<?> item, Runnable demote) {
    if (holders.containsKey(item) || max == 0 || inUse() < max) {
      holders.put(item, new Holder(item, demote));
      return true;
    }
    return false;
  }

  /**
   * A slot for a polled item read again: see the class comment.
   *
   * @param previousRead when the item was read before this read, in the clock of {@link WatchItem#lastUsed()}
   * @return whether it got a slot now (not if it held one already), the demotion of the item whose slot it took, if
   *     any (run it at once), and when to open the item's watch, once the demoted one has ended
   */
  synchronized Grant promote(WatchItem<?> item, long previousRead, Runnable demote) {
    if (holders.containsKey(item)) {
      return Grant.NONE; // another get promoted it meanwhile
    }
    if (admit(item, demote)) {
      return new Grant(true, null, millis.getAsLong());
    }
    Holder coldest = null;
    for (Holder holder : holders.values()) {
      if (coldest == null || holder.item().lastUsed() < coldest.item().lastUsed()) {
        coldest = holder;
      }
    }
    if (coldest == null || coldest.item().lastUsed() >= previousRead) {
      return Grant.NONE;
    }
    holders.remove(coldest.item());
    holders.put(item, new Holder(item, demote));
    return new Grant(true, coldest.demote(), millis.getAsLong() + CLOSE_GRACE_MILLIS);
  }

  /** @return whether a watch to be opened at {@code openAt} (see {@link Grant#openAt()}) may open now */
  boolean due(long openAt) {
    return millis.getAsLong() - openAt >= 0;
  }

  /**
   * An item gives its slot back: its watch stopped for good or for idleness, or it turned immutable. The slot stays
   * in use for {@link #CLOSE_GRACE_MILLIS}, while the watch ends on the server.
   */
  synchronized void release(WatchItem<?> item) {
    if (holders.remove(item) != null && max > 0) {
      closing.addLast(millis.getAsLong());
    }
  }

  /** Slots held or still ending; guarded by this. */
  private int inUse() {
    long now = millis.getAsLong();
    // a clock set back ends the grace rather than stretching it
    while (!closing.isEmpty() && (now - closing.peekFirst() >= CLOSE_GRACE_MILLIS || now < closing.peekFirst())) {
      closing.removeFirst();
    }
    return holders.size() + closing.size();
  }

  /**
   * Sets a new budget.
   *
   * @param max the most items holding a watch at once; 0 for no budget
   * @return the demotions of the least recently used items beyond the new budget, for the caller to run
   * @throws IllegalArgumentException if {@code max} is negative or above {@link #MAX}
   */
  public synchronized List<Runnable> resize(int max) {
    this.max = check(max);
    List<Runnable> demotions = new ArrayList<>();
    if (max == 0 || holders.size() <= max) {
      return demotions;
    }
    List<Holder> byUse = new ArrayList<>(holders.values());
    byUse.sort((a, b) -> Long.compare(a.item().lastUsed(), b.item().lastUsed()));
    for (Holder holder : byUse.subList(0, holders.size() - max)) {
      release(holder.item());
      demotions.add(holder.demote());
    }
    return demotions;
  }

  /** @return the budget; 0 for none */
  public synchronized int max() {
    return max;
  }

  /**
   * What {@link #promote} decided.
   *
   * @param granted whether the item holds a slot now
   * @param demote the demotion of the item whose slot it took, or null
   * @param openAt when, in clock millis, the item may open its watch: now with room, {@link #CLOSE_GRACE_MILLIS}
   *     later when the demoted item's watch is still ending
   */
  record Grant(boolean granted, Runnable demote, long openAt) {
    static final Grant NONE = new Grant(false, null, 0);
  }
}
