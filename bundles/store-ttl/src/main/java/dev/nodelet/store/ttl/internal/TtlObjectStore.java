package dev.nodelet.store.ttl.internal;

import dev.nodelet.cache.core.ApiServerErrors;
import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.persistence.DiskStore;
import dev.nodelet.persistence.StoredObject;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kubelet's TTL object store ({@code cache_based_manager.go}): reference counts per object, cached copies that
 * are fetched again once stale, and a refetch served from the API server's cache. The listener hears what each fetch
 * finds (a newer-or-equal object, or NotFound) in the thread of the get.
 *
 * <p>With a {@link DiskStore}, every object a fetch finds and every reference is written to disk, and a new store
 * starts with the objects a previous run stored. A stored copy is never fresh: the first get of it fetches, and only
 * if that fetch fails is the copy served ({@link ObjectState#FROM_DISK}) until a fetch succeeds and replaces it. The
 * references read back count for their pods until the pods register again; once a fetch has succeeded, those that do
 * not within the restored-reference grace period are dropped, with the objects only they referenced (looked at on
 * the store's calls: the store has no thread).
 */
public final class TtlObjectStore<T extends HasMetadata> implements ObjectStore<T> {

  private record Key(String namespace, String name) {
  }

  /** What the last fetch of one object found; guarded by itself, which also serialises the gets of that object. */
  private static final class Entry<T> {
    T object;
    boolean notFound;
    /** The copy a previous run stored, until a fetch succeeds. Volatile: listings read it without the lock. */
    volatile T fromDisk;
    // volatile: staleness reads them without the entry's lock, which a get holds while it fetches
    volatile Instant lastUpdate;
    volatile Throwable lastError;
  }

  private static final class Item<T> {
    int references;
    Instant lastAccess;
    Entry<T> entry = new Entry<>();
    /** Pods of a previous run whose references were read back from disk and that have not registered again. */
    final Set<String> restoredPods = new HashSet<>();
  }

  private static final Logger LOG = LoggerFactory.getLogger(TtlObjectStore.class);

  private final KubernetesClient client;
  private final ResourceType<T> type;
  private final Clock clock;
  private final Supplier<Duration> ttl;
  private final String collectionPath;
  private final Listener<? super T> listener;
  private final TtlMetrics.Recorder recorder;
  private final DiskStore<T> disk;
  private final Duration restoredGrace;
  /** When the restored references expire: the first successful fetch plus the grace; null until then. */
  private volatile Instant restoredExpiry;
  // guarded by this: false once the restored references expired, or if there were none
  private boolean restoredPending;

  // guarded by this
  private final Map<Key, Item<T>> items = new HashMap<>();

  /**
   * @param client the client to fetch with
   * @param type the type of the objects
   * @param clock the clock that ages copies
   * @param ttl the time-to-live in effect, asked on every get
   * @param listener told of what fetches find
   * @param metrics where the store counts its fetches
   */
  public TtlObjectStore(KubernetesClient client, ResourceType<T> type, Clock clock, Supplier<Duration> ttl,
      Listener<? super T> listener, TtlMetrics metrics) {
    this(client, type, clock, ttl, listener, metrics, DiskStore.none(), Duration.ZERO);
  }

  /**
   * A store that keeps what it fetches and its references on disk too, and starts with what a previous run stored.
   *
   * @param disk where the objects and references are kept
   * @param restoredGrace how long after the first successful fetch a pod whose references were read back from disk
   *     may take to register again before they are dropped
   */
  public TtlObjectStore(KubernetesClient client, ResourceType<T> type, Clock clock, Supplier<Duration> ttl,
      Listener<? super T> listener, TtlMetrics metrics, DiskStore<T> disk, Duration restoredGrace) {
    this.disk = Objects.requireNonNull(disk, "disk");
    this.restoredGrace = Objects.requireNonNull(restoredGrace, "restoredGrace");
    this.client = Objects.requireNonNull(client, "client");
    this.type = Objects.requireNonNull(type, "type");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.ttl = Objects.requireNonNull(ttl, "ttl");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.recorder = metrics.recorder(type.plural());
    String group = HasMetadata.getGroup(type.type());
    String version = HasMetadata.getVersion(type.type());
    this.collectionPath = (group == null || group.isEmpty() ? "/api/" : "/apis/" + group + "/") + version;
    restore();
  }

  /** Takes what a previous run stored: served only while fetches fail, see the class comment. */
  private synchronized void restore() {
    List<StoredObject<T>> stored = disk.load();
    for (StoredObject<T> entry : stored) {
      T object = entry.object();
      Item<T> item = new Item<>();
      item.references = entry.podUids().size();
      item.restoredPods.addAll(entry.podUids());
      item.entry.object = object;
      item.entry.fromDisk = object;
      items.put(new Key(object.getMetadata().getNamespace(), object.getMetadata().getName()), item);
    }
    restoredPending = !stored.isEmpty();
    if (restoredPending) {
      LOG.info("Read {} {} back from disk: served while the API server cannot be reached", stored.size(), type);
    }
  }

  /** A fetch succeeded: the restored references expire after the grace period. */
  private void answered() {
    if (restoredExpiry == null) {
      synchronized (this) {
        if (restoredExpiry == null) {
          restoredExpiry = clock.instant().plus(restoredGrace);
        }
      }
    }
  }

  /** Drops the references read back from disk whose pods have not registered again, once their time is up. */
  private void expireRestored() {
    Instant expiry = restoredExpiry;
    if (expiry == null || clock.instant().isBefore(expiry)) {
      return;
    }
    synchronized (this) {
      if (!restoredPending) {
        return;
      }
      restoredPending = false;
      items.values().removeIf(item -> {
        item.references -= item.restoredPods.size();
        item.restoredPods.clear();
        return item.references <= 0;
      });
    }
    int forgotten = disk.dropRestoredPods();
    if (forgotten > 0) {
      LOG.info("Dropped the stored references of {} pods that did not register again", forgotten);
    }
  }

  @Override
  public void addReference(String namespace, String name, String podUid) {
    expireRestored();
    synchronized (this) {
      Item<T> item = items.computeIfAbsent(new Key(namespace, name), k -> new Item<>());
      // a pod whose reference was read back from disk takes it over rather than adding a second one
      if (!item.restoredPods.remove(podUid)) {
        item.references++;
      }
      // a new or updated pod sees a fresh copy: the next get fetches; a copy from disk stays as the fallback
      if (item.entry.fromDisk == null) {
        item.entry = new Entry<>();
      }
    }
    disk.addReference(namespace, name, podUid);
  }

  @Override
  public void deleteReference(String namespace, String name, String podUid) {
    synchronized (this) {
      Key key = new Key(namespace, name);
      Item<T> item = items.get(key);
      if (item == null) {
        return;
      }
      item.restoredPods.remove(podUid);
      if (--item.references <= 0) {
        items.remove(key);
      }
    }
    disk.deleteReference(namespace, name, podUid);
  }

  @Override
  public T get(String namespace, String name) {
    expireRestored();
    Entry<T> entry;
    synchronized (this) {
      Item<T> item = items.get(new Key(namespace, name));
      if (item == null) {
        throw new NotRegisteredException(namespace, name);
      }
      item.lastAccess = clock.instant();
      entry = item.entry;
    }
    synchronized (entry) {
      if (entry.notFound || !isFresh(entry)) {
        refresh(entry, namespace, name);
      }
      if (entry.notFound) {
        throw new ObjectNotFoundException(type.plural(), namespace, name);
      }
      return entry.object;
    }
  }

  private boolean isFresh(Entry<T> entry) {
    return entry.lastUpdate != null && clock.instant().isBefore(entry.lastUpdate.plus(ttl.get()));
  }

  private void refresh(Entry<T> entry, String namespace, String name) {
    T fetched;
    try {
      // a periodic refresh of a copy we have may be served from the API server's (eventually consistent) cache; a
      // copy from disk is replaced by what the API server holds now
      fetched = fetch(namespace, name, entry.object != null && !entry.notFound && entry.fromDisk == null);
    } catch (KubernetesClientException e) {
      entry.lastError = e;
      recorder.syncFailed.inc();
      if (entry.object == null && !entry.notFound) {
        throw ApiServerErrors.getFailed(type.plural(), namespace, name, e);
      }
      // keep the old result; it stays stale, so the next get tries again
      recorder.servedStale.inc();
      return;
    }
    entry.lastError = null;
    recorder.synced.inc();
    answered();
    if (fetched == null || entry.fromDisk != null || !isOlder(fetched, entry.object)) {
      // a refresh that finds the version it had is not written again
      boolean changed = fetched == null || entry.fromDisk != null || !sameVersion(fetched, entry.object);
      entry.object = fetched;
      entry.notFound = fetched == null;
      entry.fromDisk = null;
      entry.lastUpdate = clock.instant();
      if (fetched == null) {
        disk.remove(namespace, name);
      } else if (changed) {
        disk.put(fetched);
      }
      // still under the entry's lock, so the listener hears the fetches of one object in order
      if (fetched == null) {
        listener.deleted(namespace, name, null);
      } else {
        listener.changed(fetched);
      }
    }
  }

  /** GETs the object; null if the API server has none. */
  private T fetch(String namespace, String name, boolean fromApiServerCache) {
    String path = collectionPath + "/namespaces/" + encode(namespace) + "/" + type.plural() + "/" + encode(name)
        + (fromApiServerCache ? "?resourceVersion=0" : "");
    String json = client.raw(path);
    return json == null ? null : type.cast(client.getKubernetesSerialization().unmarshal(json, type.type()));
  }

  private static String encode(String segment) {
    return URLEncoder.encode(segment, StandardCharsets.UTF_8);
  }

  private static boolean sameVersion(HasMetadata fetched, HasMetadata cached) {
    return cached != null && Objects.equals(fetched.getMetadata().getUid(), cached.getMetadata().getUid())
        && Objects.equals(fetched.getMetadata().getResourceVersion(), cached.getMetadata().getResourceVersion());
  }

  private static boolean isOlder(HasMetadata fetched, HasMetadata cached) {
    return cached != null && resourceVersion(fetched) < resourceVersion(cached);
  }

  /** As the API server's versioner; an unparseable version counts as 0, like the kubelet's ignored error. */
  private static long resourceVersion(HasMetadata object) {
    try {
      return Long.parseLong(object.getMetadata().getResourceVersion());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** The entry of a registered object, for listings: they never wait for a get's fetch. */
  private synchronized Optional<Entry<T>> entry(String namespace, String name) {
    Item<T> item = items.get(new Key(namespace, name));
    return item == null ? Optional.empty() : Optional.of(item.entry);
  }

  @Override
  public Optional<String> staleness(String namespace, String name) {
    return entry(namespace, name).flatMap(this::staleness);
  }

  private Optional<String> staleness(Entry<T> entry) {
    Throwable error = entry.lastError;
    if (entry.fromDisk != null && error == null) {
      return Optional.of("not fetched since the start; the next get fetches it");
    }
    if (error != null) {
      return Optional.of("its last fetch failed: " + ApiServerErrors.reason(error));
    }
    Instant updated = entry.lastUpdate;
    if (expired(updated)) {
      return Optional.of("its TTL expired (fetched " + updated + "); the next get fetches it again");
    }
    return Optional.empty();
  }

  private boolean expired(Instant updated) {
    return updated != null && !clock.instant().isBefore(updated.plus(ttl.get()));
  }

  /**
   * True while the copy is stale only for its age: its last fetch succeeded and the next get fetches again. A failed
   * fetch (whose copy the next get may serve again) and a copy from disk are not.
   */
  @Override
  public boolean refreshedOnNextGet(String namespace, String name) {
    return entry(namespace, name)
        .filter(entry -> entry.fromDisk == null && entry.lastError == null && expired(entry.lastUpdate))
        .isPresent();
  }

  /** {@link ObjectState#FROM_DISK} while the copy a previous run stored is served; otherwise the store does not tell. */
  @Override
  public Optional<ObjectState> state(String namespace, String name) {
    return entry(namespace, name).filter(entry -> entry.fromDisk != null).map(entry -> ObjectState.FROM_DISK);
  }

  @Override
  public Optional<T> diskCopy(String namespace, String name) {
    return entry(namespace, name).map(entry -> entry.fromDisk);
  }

  /** The items whose every reference was read back from disk. */
  @Override
  public List<Restored> restoredObjects() {
    expireRestored();
    List<Restored> result = new ArrayList<>();
    synchronized (this) {
      items.forEach((key, item) -> {
        if (!item.restoredPods.isEmpty() && item.references == item.restoredPods.size()) {
          result.add(new Restored(key.namespace(), key.name(), item.references));
        }
      });
    }
    return result;
  }

  /** Owns nothing: references and copies stay readable. */
  @Override
  public synchronized Optional<Instant> lastAccess(String namespace, String name) {
    Item<T> item = items.get(new Key(namespace, name));
    return item == null ? Optional.empty() : Optional.ofNullable(item.lastAccess);
  }

  @Override
  public void close() {
    // every fetch happens in the caller's get
  }
}
