package dev.nodelet.store.watch.internal;

import dev.nodelet.cache.core.ApiServerErrors;
import dev.nodelet.objectcache.CacheSyncException;
import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.persistence.DiskStore;
import dev.nodelet.persistence.StoredObject;
import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.kube.watch.ReflectorException;
import dev.nodelet.kube.watch.ReflectorListener;
import dev.nodelet.kube.watch.Reflectors;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The watch-based store of the kubelet ({@code watch_based_manager.go}): one list+watch per referenced object, with
 * field selector {@code metadata.name=<name>}.
 *
 * <p>Each object has its own {@link Reflector} from the {@link Reflectors} the store is given: no informer, no store or
 * indexer beside the one object, and no thread of its own. The reflector syncs (WatchList, or LIST then WATCH), resumes
 * after a cut from the last resourceVersion, lists again only on 410 Gone, and shapes its restarts through the shared
 * restart bucket. Registering a pod only queues the openings and wakes no thread: the first get that waits for a sync
 * opens what is queued on its own thread (the kubelet reads a pod's objects right after registering it), and the
 * timer opens what no get has within {@value #OPEN_INTERVAL_MILLIS} ms. A get of a synced
 * object takes no lock and reads no clock: it reads the object's snapshot and notes the access in a clock that a timer
 * refreshes every second.
 *
 * <p>The listener hears every add, update and delete a watch or list sees, and what a get finds that they do not
 * tell, under the item's {@code reports} lock so that it hears them in the order observed. It also hears of a copy
 * from disk that a bookmark confirms, and, when a pod of this run references an object that until then only
 * references read back from disk held (the listener's owner ignored what it heard of it), of the copy held then. It
 * is never called from the reference methods.
 *
 * <p>With a {@link DiskStore}, every version a watch or list sees and every reference is written to disk, and a new
 * store starts with the objects a previous run stored: each is served at once (state
 * {@link ObjectState#FROM_DISK}) and its reflector resumes from the stored resourceVersion without a list; the first
 * event or bookmark confirms or replaces the copy, a 410 lists again. The references read back count for their pods
 * until the pods register again; once the API server has answered, those that do not within the restored-reference
 * grace period are dropped, with the objects only they referenced.
 *
 * <p>The strategy's {@link WatchBudget} decides which items hold a watch. One without a slot is polled: a get serves
 * its copy while younger than the time-to-live and GETs it otherwise, as the TTL store does, and a polled item read
 * again may take the slot of a colder one. Restored items ask for a slot too.
 */
public final class WatchObjectStore<T extends HasMetadata> implements ObjectStore<T> {

  private static final Logger LOG = LoggerFactory.getLogger(WatchObjectStore.class);

  /** How often a get looks whether an item has synced, as the kubelet polls. */
  private static final long SYNC_POLL_MILLIS = 10;
  /**
   * How often the timer opens the watches that registrations queued and no get has opened. A registration does not
   * wake the timer: waking a parked thread is a system call that alone would cost it tens of microseconds.
   */
  static final long OPEN_INTERVAL_MILLIS = 100;

  private final ResourceType<T> type;
  /** The type's immutability test, one instance for all the items. */
  private final Predicate<T> immutable;
  private final Clock clock;
  private final WatchSettings settings;
  private final ScheduledExecutorService timer;
  private final Listener<? super T> listener;
  /** For the GET that checks an immutable copy again. */
  private final KubernetesClient client;
  private final Reflectors reflectors;
  private final List<ScheduledFuture<?>> ticks = new ArrayList<>();
  /** Reflectors to open ({@link #openLater}). */
  private final Queue<Opening<T>> openings = new ConcurrentLinkedQueue<>();
  /** Items whose copy the listener is to hear of again ({@link #reportLater}). */
  private final Queue<WatchItem<T>> retell = new ConcurrentLinkedQueue<>();
  /** Polled items that took a colder one's slot, opened once its watch has ended ({@link #openPromoted}). */
  private final Queue<Promoted<T>> promoted = new ConcurrentLinkedQueue<>();
  /** Namespace → name → item: read by gets without a lock, changed under this store's lock. */
  private final Map<String, Map<String, WatchItem<T>>> items = new ConcurrentHashMap<>();
  /** The clock's millis, refreshed every second and by each sweep. */
  private volatile long now;
  private volatile boolean stopped;
  private final DiskStore<T> disk;
  private final Duration restoredGrace;
  /** Set by the first answer of the API server, which starts the grace period of the restored references. */
  private final AtomicBoolean answered = new AtomicBoolean();
  // guarded by this
  private Runnable onClose = () -> { };
  private final WatchMetrics metrics;
  private final WatchMetrics.Recorder recorder;

  /**
   * @param client the client of the GET that checks an immutable object again
   * @param reflectors where each object's reflector comes from
   * @param type the type of the objects
   * @param clock the clock of access times
   * @param settings the options
   * @param timer a single thread: opens queued watches, refreshes the access clock and runs the idle sweep every
   *     {@link WatchSettings#sweepInterval()} (with a zero interval, only {@link #sweep()} does the last two)
   * @param listener told of what the watches and gets observe
   * @param metrics where the store counts its lists, watches and propagation delays
   */
  public WatchObjectStore(KubernetesClient client, Reflectors reflectors, ResourceType<T> type, Clock clock,
      WatchSettings settings, ScheduledExecutorService timer, Listener<? super T> listener, WatchMetrics metrics) {
    this(client, reflectors, type, clock, settings, timer, listener, DiskStore.none(), Duration.ZERO, metrics);
  }

  /**
   * A store that keeps its objects and references on disk too, and starts with those a previous run stored.
   *
   * @param disk where the objects and references are kept
   * @param restoredGrace how long after the API server's first answer a pod whose reference was read back from disk
   *     may take to register again before its references are dropped
   * @param metrics where the store counts its lists, watches and propagation delays
   */
  public WatchObjectStore(KubernetesClient client, Reflectors reflectors, ResourceType<T> type, Clock clock,
      WatchSettings settings, ScheduledExecutorService timer, Listener<? super T> listener, DiskStore<T> disk,
      Duration restoredGrace, WatchMetrics metrics) {
    this.disk = Objects.requireNonNull(disk, "disk");
    this.restoredGrace = Objects.requireNonNull(restoredGrace, "restoredGrace");
    this.client = Objects.requireNonNull(client, "client");
    this.reflectors = Objects.requireNonNull(reflectors, "reflectors");
    this.type = Objects.requireNonNull(type, "type");
    this.immutable = type::isImmutable;
    this.clock = Objects.requireNonNull(clock, "clock");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.timer = Objects.requireNonNull(timer, "timer");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.now = clock.millis();
    this.metrics = metrics;
    this.recorder = metrics.open(this);
    long sweepMillis = settings.sweepInterval().toMillis();
    if (sweepMillis > 0) {
      ticks.add(timer.scheduleWithFixedDelay(this::sweep, sweepMillis, sweepMillis, TimeUnit.MILLISECONDS));
      ticks.add(timer.scheduleWithFixedDelay(() -> now = clock.millis(), 1, 1, TimeUnit.SECONDS));
    }
    ticks.add(timer.scheduleWithFixedDelay(this::openQueued, OPEN_INTERVAL_MILLIS, OPEN_INTERVAL_MILLIS,
        TimeUnit.MILLISECONDS));
    restore();
  }

  /** Serves what a previous run stored and resumes each watch from its stored resourceVersion. */
  private synchronized void restore() {
    List<StoredObject<T>> stored = disk.load();
    for (StoredObject<T> entry : stored) {
      T object = entry.object();
      String namespace = object.getMetadata().getNamespace();
      String name = object.getMetadata().getName();
      WatchItem<T> item = new WatchItem<>(namespace, name, immutable, now);
      entry.podUids().forEach(pod -> item.references.put(pod, 1));
      item.restoredPods.addAll(entry.podUids());
      items.computeIfAbsent(namespace, n -> new ConcurrentHashMap<>()).put(name, item);
      if (object.getMetadata().getResourceVersion() == null) {
        item.snapshot = new WatchItem.Snapshot<>(object, true, true);
        start(item); // nothing to resume from: a fresh sync confirms or replaces the copy
      } else {
        int run = item.restore(object);
        if (admit(item)) {
          open(item, run, object);
        }
      }
    }
    if (!stored.isEmpty()) {
      LOG.info("Serving {} {} from disk until the API server confirms them", stored.size(), type);
    }
  }

  /** The API server answered: from now on, restored references of pods that do not register again expire. */
  private void answered() {
    if (!answered.get() && answered.compareAndSet(false, true)) {
      try {
        timer.schedule(this::expireRestored, restoredGrace.toMillis(), TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        // the strategy is closed
      }
    }
  }

  /** Drops the references read back from disk whose pods have not registered again. */
  private synchronized void expireRestored() {
    if (stopped) {
      return;
    }
    items.forEach((namespace, names) -> List.copyOf(names.values()).forEach(item -> {
      for (String pod : List.copyOf(item.restoredPods)) {
        item.restoredPods.remove(pod);
        item.references.remove(pod);
      }
      if (item.references.isEmpty()) {
        drop(item);
      }
    }));
    int forgotten = disk.dropRestoredPods();
    if (forgotten > 0) {
      LOG.info("Dropped the stored references of {} pods that did not register again", forgotten);
    }
  }

  /** Runs once when this store closes (the strategy forgets it). */
  public synchronized void onClose(Runnable action) {
    this.onClose = action;
  }

  @Override
  public synchronized void addReference(String namespace, String name, String podUid) {
    Map<String, WatchItem<T>> names = items.computeIfAbsent(namespace, n -> new ConcurrentHashMap<>());
    WatchItem<T> item = names.get(name);
    if (item == null) {
      // only enqueues the list: the first get waits for it
      item = new WatchItem<>(namespace, name, immutable, now);
      names.put(name, item);
      if (!stopped) {
        start(item);
      }
    } else {
      item.requestVerification();
      if (item.onlyRestoredReferences()) {
        // the owner counts no pod for it until now, so it ignored what was observed of it (the copy restored
        // from disk, a bookmark that confirmed it, an event): it hears of the copy held now
        reportLater(item);
      }
    }
    // a pod whose reference was read back from disk takes it over rather than adding a second one
    if (!item.restoredPods.remove(podUid)) {
      item.references.merge(podUid, 1, Integer::sum);
    }
    item.referenced = now;
    disk.addReference(namespace, name, podUid);
  }

  @Override
  public synchronized void deleteReference(String namespace, String name, String podUid) {
    Map<String, WatchItem<T>> names = items.get(namespace);
    WatchItem<T> item = names == null ? null : names.get(name);
    // a reference the pod never held is ignored, so the count cannot go negative and pin the item forever
    if (item == null || !item.references.containsKey(podUid)) {
      return;
    }
    if (item.references.merge(podUid, -1, Integer::sum) == 0) {
      item.references.remove(podUid);
      item.restoredPods.remove(podUid);
      disk.deleteReference(namespace, name, podUid);
    }
    if (item.references.isEmpty()) {
      drop(item);
    }
  }

  /** Stops and forgets an item no pod references; guarded by this. */
  private void drop(WatchItem<T> item) {
    item.stop();
    close(item.takeReflector());
    settings.budget().release(item);
    Map<String, WatchItem<T>> names = items.get(item.namespace);
    if (names != null) {
      names.remove(item.name);
      if (names.isEmpty()) {
        items.remove(item.namespace);
      }
    }
  }

  @Override
  public T get(String namespace, String name) {
    Map<String, WatchItem<T>> names = items.get(namespace);
    WatchItem<T> item = names == null ? null : names.get(name);
    if (item == null) {
      throw new NotRegisteredException(namespace, name);
    }
    // recorded whether or not the get succeeds, so that a slow sync does not look idle
    item.touch(now);
    WatchItem.Snapshot<T> snapshot = item.snapshot;
    if (snapshot != null && snapshot.servable()) {
      return snapshot.object();
    }
    return slowGet(item);
  }

  /** A get that may restart, verify or wait: the object is not synced, absent, immutable or under verification. */
  private T slowGet(WatchItem<T> item) {
    if (!stopped) {
      start(item);
    }
    WatchItem.Polled polled = item.polled;
    if (polled == null) {
      polled = item.handover; // moved back to a watch that has not delivered yet
    }
    if (polled != null) {
      return polledGet(item, polled);
    }
    verifyImmutableCopy(item);
    openQueued(); // this thread waits for the sync anyway: no need to wait for the timer's tick
    T object = awaitSync(item).object();
    if (object == null) {
      synchronized (item.reports) {
        // a watch restarted after an idle stop lists without the object but reports no deletion; checked again
        // here, since an add observed after this check is then told after this deletion
        WatchItem.Snapshot<T> current = item.snapshot;
        if (current != null && current.object() == null) {
          listener.deleted(item.namespace, item.name, null);
        }
      }
      throw new ObjectNotFoundException(type.plural(), item.namespace, item.name);
    }
    if (type.isImmutable(object) && item.makeImmutable(object)) {
      close(item.takeReflector());
      settings.budget().release(item);
      LOG.debug("Stopped watching {} {}/{}: the object is immutable", type, item.namespace, item.name);
    }
    return object;
  }

  /**
   * An immutable object can be deleted and re-created under the same name (kubernetes#131589): before a newly
   * registered pod is served the kept copy, a GET checks that the object still has the copy's UID.
   */
  private void verifyImmutableCopy(WatchItem<T> item) {
    String uid = item.uidToVerify();
    if (uid == null) {
      return;
    }
    T live = client.resources(type.type()).inNamespace(item.namespace).withName(item.name).get();
    String liveUid = live == null ? null : live.getMetadata().getUid();
    synchronized (item.reports) {
      if (item.verified(uid, liveUid)) {
        LOG.debug("Watching {} {}/{} again: the immutable object was replaced or deleted", type, item.namespace,
            item.name);
        // the kept object is gone; a re-created one is another object
        listener.deleted(item.namespace, item.name, null);
        disk.remove(item.namespace, item.name);
        if (live != null) {
          listener.changed(live);
          disk.put(live);
        }
        if (!stopped) {
          start(item);
        }
      }
    }
  }

  private WatchItem.Snapshot<T> awaitSync(WatchItem<T> item) {
    long deadline = System.nanoTime() + settings.syncWait().toNanos();
    while (true) {
      WatchItem.Snapshot<T> snapshot = item.snapshot;
      if (snapshot != null) {
        return snapshot;
      }
      // a closed store starts nothing: fail at once rather than after the wait
      if (stopped) {
        throw new CacheSyncException(type.plural(), item.namespace, item.name, "the store is closed", null);
      }
      if (System.nanoTime() - deadline >= 0) {
        Throwable error = item.lastError();
        throw new CacheSyncException(type.plural(), item.namespace, item.name, notSyncedReason(error), error);
      }
      try {
        Thread.sleep(SYNC_POLL_MILLIS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CacheSyncException(type.plural(), e);
      }
    }
  }

  /** Why an item has not synced: its last list or watch failure, if any. */
  private static String notSyncedReason(Throwable error) {
    return error == null ? "no answer from the API server yet" : ApiServerErrors.reason(error);
  }

  private void start(WatchItem<T> item) {
    int run = item.start();
    if (run != 0 && admit(item)) {
      openLater(item, run);
    }
  }

  /** An item whose run's reflector is still to be opened. */
  private record Opening<T extends HasMetadata>(WatchItem<T> item, int run) {
  }

  /**
   * Queues the opening of a run's reflector, for the next get that waits for a sync or the timer's next tick; a run
   * stopped before its turn (the pod went again) opens nothing.
   */
  private void openLater(WatchItem<T> item, int run) {
    openings.add(new Opening<>(item, run));
  }

  /**
   * Has the listener hear of the copy the item holds then, off the registering thread: at the timer's next tick or
   * the next get that waits for a sync, whichever comes first.
   */
  private void reportLater(WatchItem<T> item) {
    retell.add(item);
  }

  /** Tells the listener of the copies that {@link #reportLater} queued, under each item's reports lock. */
  private void reportQueued() {
    WatchItem<T> item;
    while ((item = retell.poll()) != null) {
      synchronized (item.reports) {
        WatchItem.Snapshot<T> current = item.snapshot;
        if (!stopped && current != null && current.object() != null) {
          T object = current.object();
          tell(() -> listener.changed(object));
        }
      }
    }
  }

  /**
   * Opens every queued reflector and reports what is queued for the listener; on the timer, on a get that waits for
   * a sync, and at every {@link #sweep()}.
   */
  private void openQueued() {
    reportQueued();
    Opening<T> next;
    while ((next = openings.poll()) != null) {
      try {
        if (!stopped && next.item().isRun(next.run())) {
          open(next.item(), next.run(), null);
        }
      } catch (RuntimeException e) {
        // one broken opening must not stop the queue: the item's next get starts it again
        LOG.error("Cannot watch {} {}/{}", type, next.item().namespace, next.item().name, e);
        if (next.item().stop()) {
          settings.budget().release(next.item());
        }
      }
    }
  }

  /** Takes a watch slot for an item that started; without room, it is served by GETs (polled) instead. */
  private boolean admit(WatchItem<T> item) {
    if (settings.budget().admit(item, () -> demote(item))) {
      return true;
    }
    if (item.demote(clock.millis())) {
      recorder.toPolled.inc();
      close(item.takeReflector());
    }
    return false;
  }

  /** Ends the watch of an item that gave its slot to another: GETs serve it from now on. */
  private void demote(WatchItem<T> item) {
    if (item.demote(clock.millis())) {
      recorder.toPolled.inc();
      close(item.takeReflector());
      LOG.debug("Polling {} {}/{}: its watch went to a more recently used object", type, item.namespace, item.name);
    }
  }

  /**
   * A get of a polled item: the TTL store's rules (fetched again once the copy is older than the time-to-live; a
   * failed fetch serves the copy held, stale), then a move back to a watch if the item proves hot.
   */
  private T polledGet(WatchItem<T> item, WatchItem.Polled polled) {
    long previousRead;
    WatchItem.Snapshot<T> snapshot;
    synchronized (polled) {
      if (stopped) {
        throw new CacheSyncException(type.plural(), item.namespace, item.name, "the store is closed", null);
      }
      long at = clock.millis();
      if (polled.fetched < 0 || at - polled.fetched >= settings.polledTtl().get().toMillis()) {
        fetch(item, polled, at);
      }
      previousRead = polled.lastRead;
      // in the coarse clock of the watched items' use, so that reads within its tick trade no watches
      polled.lastRead = now;
      snapshot = item.snapshot;
    }
    T object = snapshot == null ? null : snapshot.object();
    if (object != null && type.isImmutable(object)) {
      // never watched: its copy is served from memory, as a watched one's once seen immutable
      if (item.makeImmutable(object)) {
        // a watch that was to replace the polling ends too
        close(item.takeReflector());
        settings.budget().release(item);
        LOG.debug("Stopped polling {} {}/{}: the object is immutable", type, item.namespace, item.name);
      }
      return object;
    }
    if (previousRead >= 0) {
      promote(item, previousRead);
    }
    if (object == null) {
      throw new ObjectNotFoundException(type.plural(), item.namespace, item.name);
    }
    return object;
  }

  /** GETs a polled item and installs what it finds; with nothing to serve, a failure fails the get. */
  private void fetch(WatchItem<T> item, WatchItem.Polled polled, long at) {
    T fetched;
    try {
      fetched = client.resources(type.type()).inNamespace(item.namespace).withName(item.name).get();
    } catch (KubernetesClientException e) {
      polled.lastError = e;
      recorder.pollFailed.inc();
      WatchItem.Snapshot<T> held = item.snapshot;
      if (held == null) {
        throw ApiServerErrors.getFailed(type.plural(), item.namespace, item.name, e);
      }
      return;
    }
    recorder.polled.inc();
    answered();
    synchronized (item.reports) {
      WatchItem.Snapshot<T> before = item.snapshot;
      if (!item.fetched(polled, fetched, at)) {
        return;
      }
      if (fetched != null) {
        if (before == null || before.fromDisk() || before.object() == null
            || !Objects.equals(fetched.getMetadata().getResourceVersion(),
                before.object().getMetadata().getResourceVersion())) {
          disk.put(fetched);
        }
        tell(() -> listener.changed(fetched));
      } else {
        disk.remove(item.namespace, item.name);
        if (before != null && before.object() != null) {
          tell(() -> listener.deleted(item.namespace, item.name, null));
        }
      }
    }
  }

  /** A polled item read again: back to a watch if the budget gives it a slot (see {@link WatchBudget}). */
  private void promote(WatchItem<T> item, long previousRead) {
    WatchBudget.Grant grant = settings.budget().promote(item, previousRead, () -> demote(item));
    if (!grant.granted()) {
      return;
    }
    if (grant.demote() != null) {
      grant.demote().run();
    }
    if (settings.budget().due(grant.openAt())) {
      watchAgain(item);
      return;
    }
    // polled until the demoted watch has ended on the server too
    promoted.add(new Promoted<>(item, grant.openAt()));
    if (!settings.sweepInterval().isZero()) {
      openPromotedLater(grant.openAt());
    }
  }

  /** A polled item holding a slot, and when (clock millis) it may open its watch. */
  private record Promoted<T extends HasMetadata>(WatchItem<T> item, long openAt) {
  }

  /** Has the timer run {@link #openPromoted} at {@code openAt} by the clock. */
  private void openPromotedLater(long openAt) {
    try {
      timer.schedule(this::openPromoted, Math.max(1, openAt - clock.millis()), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // the strategy is closed: closing released every slot
    }
  }

  /**
   * Opens the watches of the promoted items whose grace has passed on the clock; on the timer, and at every
   * {@link #sweep()} (with manual ticks, the owner's tick decides when the grace has passed).
   */
  private void openPromoted() {
    long next = Long.MAX_VALUE;
    for (Iterator<Promoted<T>> it = promoted.iterator(); it.hasNext(); ) {
      Promoted<T> entry = it.next();
      if (settings.budget().due(entry.openAt())) {
        it.remove();
        watchAgain(entry.item());
      } else {
        next = Math.min(next, entry.openAt());
      }
    }
    if (next != Long.MAX_VALUE && !settings.sweepInterval().isZero()) {
      openPromotedLater(next); // the timer ran before the clock reached it
    }
  }

  /** A polled item that holds a slot opens its watch, unless it was dropped or the store closed meanwhile. */
  private void watchAgain(WatchItem<T> item) {
    if (stopped || !item.unpoll()) {
      settings.budget().release(item);
      return;
    }
    recorder.toWatched.inc();
    LOG.debug("Watching {} {}/{} again: it is read often", type, item.namespace, item.name);
    start(item);
  }

  /** Moves polled items back to watches while the budget has room, most recently read first. */
  public void fillBudget() {
    if (stopped) {
      return;
    }
    List<WatchItem<T>> polledItems = new ArrayList<>();
    items.values().forEach(names -> names.values().forEach(item -> {
      if (item.polled != null) {
        polledItems.add(item);
      }
    }));
    polledItems.sort(Comparator.comparingLong(WatchItem<T>::lastUsed).reversed());
    for (WatchItem<T> item : polledItems) {
      if (!settings.budget().admit(item, () -> demote(item))) {
        return;
      }
      if (item.unpoll()) {
        recorder.toWatched.inc();
        start(item);
      } else {
        settings.budget().release(item);
      }
    }
  }

  /**
   * Opens the reflector of a run: a fresh sync, or, for a copy read back from disk, a watch from its
   * resourceVersion (a 410 makes the reflector list). Never waits for the network.
   */
  private void open(WatchItem<T> item, int run, T restored) {
    ItemListener events = new ItemListener(item, run, restored);
    Reflector<T> reflector;
    try {
      Reflector.Builder<T> builder = reflectors.reflector(type.type()).namespace(item.namespace)
          .fieldSelector("metadata.name=" + item.name).listener(events);
      if (restored != null) {
        builder.resumeFrom(restored.getMetadata().getResourceVersion(), List.of(restored));
      }
      reflector = builder.start();
    } catch (IllegalStateException e) {
      // the reflectors were closed under this store (the connection was replaced): gets fail with the reason
      item.failed(run, restored == null, e);
      return;
    }
    if (!item.watching(run, reflector)) {
      reflector.close();
    }
  }

  private void listed(WatchItem<T> item, int run, T object, String version) {
    synchronized (item.reports) {
      WatchItem.Snapshot<T> before = item.snapshot;
      // on disk before a get can return it
      store(item, run, object);
      if (!item.observed(run, object, version)) {
        return;
      }
      answered();
      if (object != null) {
        tell(() -> listener.changed(object));
      } else if (before != null && before.object() != null) {
        // a relist no longer finds what the lost watch last saw; the deletion's version is unknown
        tell(() -> listener.deleted(item.namespace, item.name, null));
      }
    }
  }

  /** Writes what a run of the item saw to disk (null: no such object), unless that run is over. */
  private void store(WatchItem<T> item, int run, T object) {
    if (!item.isRun(run)) {
      return;
    }
    if (object != null) {
      disk.put(object);
    } else {
      disk.remove(item.namespace, item.name);
    }
  }

  private void tell(Runnable report) {
    try {
      report.run();
    } catch (RuntimeException e) {
      LOG.warn("The listener of the {} store failed", type, e);
    }
  }

  private static void close(Reflector<?> reflector) {
    if (reflector != null) {
      reflector.close();
    }
  }

  /**
   * What the reflector of one run of an item reports, one callback at a time, in order. A (re)list reports the
   * difference to the state before and then its sync: the object it found is installed at the sync, as a list's
   * answer; between syncs every change is a watch event.
   */
  private final class ItemListener implements ReflectorListener<T> {
    private final WatchItem<T> item;
    private final int run;
    /** The object as the reflector reported it last, null if there is none. */
    private T current;
    /** True until the (re)list's sync: changes are the difference of a list, not watch events. */
    private boolean listing;

    ItemListener(WatchItem<T> item, int run, T restored) {
      this.item = item;
      this.run = run;
      this.current = restored;
      this.listing = restored == null;
    }

    @Override
    public void onAdd(T object) {
      changed(object);
    }

    @Override
    public void onUpdate(T oldObject, T newObject) {
      changed(newObject);
    }

    private void changed(T object) {
      current = object;
      if (listing) {
        return;
      }
      long received = System.nanoTime();
      synchronized (item.reports) {
        store(item, run, object);
        if (item.observed(run, object, object.getMetadata().getResourceVersion())) {
          recorder.visible(received);
          answered();
          tell(() -> listener.changed(object));
        }
      }
    }

    @Override
    public void onDelete(T object) {
      current = null;
      if (listing) {
        return;
      }
      long received = System.nanoTime();
      // the watch's DELETED event carries the version of the deletion
      String version = object.getMetadata().getResourceVersion();
      synchronized (item.reports) {
        store(item, run, null);
        if (item.observed(run, null, version)) {
          recorder.visible(received);
          answered();
          tell(() -> listener.deleted(item.namespace, item.name, version));
        }
      }
    }

    @Override
    public void onSynced(String resourceVersion) {
      listing = false;
      recorder.synced.inc();
      listed(item, run, current, resourceVersion);
    }

    @Override
    public void onBookmark(String resourceVersion) {
      synchronized (item.reports) {
        T confirmed = item.progressed(run, resourceVersion);
        if (confirmed != null) {
          // the copy from disk is current: reported as any object a watch delivers
          tell(() -> listener.changed(confirmed));
        }
      }
      answered();
    }

    @Override
    public void onRestart(String resourceVersion) {
      recorder.restarted.inc();
      item.reopened(run);
      answered();
    }

    @Override
    public void onGone(String resourceVersion) {
      // 410 Gone: the reflector lists again; its difference and sync follow
      listing = true;
      recorder.relisted.inc();
      item.failed(run, true, new ReflectorException("the resourceVersion " + resourceVersion + " of " + type + " "
          + item.namespace + "/" + item.name + " is gone (410); listing again", 410, null));
      answered();
    }

    @Override
    public void onError(ReflectorException error) {
      if (listing) {
        recorder.syncFailed.inc();
        recorder.relisted.inc();
      }
      item.failed(run, listing, error);
      LOG.debug("{} of {} {}/{} failed: {}", listing ? "List" : "Watch", type, item.namespace, item.name,
          error.getMessage());
    }
  }

  @Override
  public Optional<ObjectState> state(String namespace, String name) {
    Map<String, WatchItem<T>> names = items.get(namespace);
    WatchItem<T> item = names == null ? null : names.get(name);
    return item == null ? Optional.empty() : Optional.of(item.state(stopped));
  }

  /** The items whose every reference was read back from disk; under this store's lock, which guards the references. */
  @Override
  public synchronized List<Restored> restoredObjects() {
    List<Restored> result = new ArrayList<>();
    items.values().forEach(names -> names.values().forEach(item -> {
      if (!item.restoredPods.isEmpty() && item.restoredPods.containsAll(item.references.keySet())) {
        result.add(new Restored(item.namespace, item.name, item.restoredPods.size()));
      }
    }));
    return result;
  }

  @Override
  public Optional<T> diskCopy(String namespace, String name) {
    Map<String, WatchItem<T>> names = items.get(namespace);
    WatchItem<T> item = names == null ? null : names.get(name);
    WatchItem.Snapshot<T> snapshot = item == null ? null : item.snapshot;
    return snapshot != null && snapshot.fromDisk() ? Optional.ofNullable(snapshot.object()) : Optional.empty();
  }

  @Override
  public Optional<String> staleness(String namespace, String name) {
    WatchItem<T> item = item(namespace, name);
    if (item == null) {
      return Optional.empty();
    }
    WatchItem.Polled polled = item.polled;
    return polled != null ? polledStaleness(item, polled).reason() : item.staleness(stopped);
  }

  /** An idle item (the next get watches it again) or a polled one whose copy aged (the next get fetches it). */
  @Override
  public boolean refreshedOnNextGet(String namespace, String name) {
    WatchItem<T> item = item(namespace, name);
    if (item == null) {
      return false;
    }
    WatchItem.Polled polled = item.polled;
    return polled != null ? polledStaleness(item, polled).refreshedOnNextGet()
        : item.state(stopped) == ObjectState.IDLE;
  }

  private PolledStaleness polledStaleness(WatchItem<T> item, WatchItem.Polled polled) {
    WatchItem.Snapshot<T> snapshot = item.snapshot;
    return PolledStaleness.of(polled, snapshot != null && snapshot.fromDisk(), settings, clock.millis(), stopped);
  }

  private WatchItem<T> item(String namespace, String name) {
    Map<String, WatchItem<T>> names = items.get(namespace);
    return names == null ? null : names.get(name);
  }

  @Override
  public Optional<Instant> lastAccess(String namespace, String name) {
    Map<String, WatchItem<T>> names = items.get(namespace);
    WatchItem<T> item = names == null ? null : names.get(name);
    return item == null ? Optional.empty() : Optional.of(Instant.ofEpochMilli(item.lastAccess));
  }

  /**
   * Stops the watches of items that are synced and have not been read for longer than the maximum idle time, and
   * takes the clock's time for the access times that follow.
   */
  public void sweep() {
    long current = clock.millis();
    now = current;
    openQueued();
    openPromoted();
    long maxIdle = settings.maxIdleTime().toMillis();
    items.values().forEach(names -> names.values().forEach(item -> {
      if (item.stopIfIdle(current, maxIdle)) {
        close(item.takeReflector());
        settings.budget().release(item);
        LOG.debug("Stopped watching {} {}/{}: not read for {}", type, item.namespace, item.name,
            settings.maxIdleTime());
      }
    }));
  }

  /** Stops every watch, the sweep and the access clock; registrations stay, nothing restarts. */
  @Override
  public void close() {
    Runnable closed;
    synchronized (this) {
      if (stopped) {
        return;
      }
      stopped = true;
      items.values().forEach(names -> names.values().forEach(item -> {
        item.stop();
        close(item.takeReflector());
        settings.budget().release(item);
      }));
      closed = onClose;
    }
    promoted.clear();
    openings.clear();
    retell.clear();
    ticks.forEach(tick -> tick.cancel(false));
    metrics.closed(this);
    closed.run();
  }

  /** @return the plural resource name of the objects, for metrics */
  String resource() {
    return type.plural();
  }

  /** @return how many items the watch budget serves by GETs now */
  int polledObjects() {
    int polled = 0;
    for (Map<String, WatchItem<T>> names : items.values()) {
      for (WatchItem<T> item : names.values()) {
        if (item.polled != null) {
          polled++;
        }
      }
    }
    return polled;
  }

  /** @return how many items hold a watch open now */
  int openWatches() {
    int open = 0;
    for (Map<String, WatchItem<T>> names : items.values()) {
      for (WatchItem<T> item : names.values()) {
        if (item.hasWatch()) {
          open++;
        }
      }
    }
    return open;
  }
}
