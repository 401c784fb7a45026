package dev.nodelet.store.ttl.internal;

import dev.nodelet.cache.core.ApiServerErrors;
import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The kubelet's TTL object store ({@code cache_based_manager.go}): reference counts per object, cached copies that
 * are fetched again once stale, and a refetch served from the API server's cache. The listener hears what each fetch
 * finds (a newer-or-equal object, or NotFound) in the thread of the get.
 */
public final class TtlObjectStore<T extends HasMetadata> implements ObjectStore<T> {

  private record Key(String namespace, String name) {
  }

  /** What the last fetch of one object found; guarded by itself, which also serialises the gets of that object. */
  private static final class Entry<T> {
    T object;
    boolean notFound;
    // volatile: staleness reads them without the entry's lock, which a get holds while it fetches
    volatile Instant lastUpdate;
    volatile Throwable lastError;
  }

  private static final class Item<T> {
    int references;
    Instant lastAccess;
    Entry<T> entry = new Entry<>();
  }

  private final KubernetesClient client;
  private final ResourceType<T> type;
  private final Clock clock;
  private final Supplier<Duration> ttl;
  private final String collectionPath;
  private final Listener<? super T> listener;
  private final TtlMetrics.Recorder recorder;

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
    this.client = Objects.requireNonNull(client, "client");
    this.type = Objects.requireNonNull(type, "type");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.ttl = Objects.requireNonNull(ttl, "ttl");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.recorder = metrics.recorder(type.plural());
    String group = HasMetadata.getGroup(type.type());
    String version = HasMetadata.getVersion(type.type());
    this.collectionPath = (group == null || group.isEmpty() ? "/api/" : "/apis/" + group + "/") + version;
  }

  @Override
  public synchronized void addReference(String namespace, String name, String podUid) {
    Item<T> item = items.computeIfAbsent(new Key(namespace, name), k -> new Item<>());
    item.references++;
    // a new or updated pod sees a fresh copy: the next get fetches
    item.entry = new Entry<>();
  }

  @Override
  public synchronized void deleteReference(String namespace, String name, String podUid) {
    Key key = new Key(namespace, name);
    Item<T> item = items.get(key);
    if (item != null && --item.references == 0) {
      items.remove(key);
    }
  }

  @Override
  public T get(String namespace, String name) {
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
      // a periodic refresh of a copy we have may be served from the API server's (eventually consistent) cache
      fetched = fetch(namespace, name, entry.object != null && !entry.notFound);
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
    if (fetched == null || !isOlder(fetched, entry.object)) {
      entry.object = fetched;
      entry.notFound = fetched == null;
      entry.lastUpdate = clock.instant();
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

  @Override
  public Optional<String> staleness(String namespace, String name) {
    Entry<T> entry;
    synchronized (this) {
      Item<T> item = items.get(new Key(namespace, name));
      if (item == null) {
        return Optional.empty();
      }
      entry = item.entry;
    }
    Throwable error = entry.lastError;
    if (error != null) {
      return Optional.of("its last fetch failed: " + ApiServerErrors.reason(error));
    }
    Instant updated = entry.lastUpdate;
    if (updated != null && !clock.instant().isBefore(updated.plus(ttl.get()))) {
      return Optional.of("its TTL expired (fetched " + updated + "); the next get fetches it again");
    }
    return Optional.empty();
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
