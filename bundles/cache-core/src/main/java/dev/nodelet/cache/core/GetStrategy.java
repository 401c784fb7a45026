package dev.nodelet.cache.core;

import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code get} strategy (the kubelet's "Get"): every get is a direct GET on the API server and references are not
 * tracked, so a get of an object no pod references succeeds too. Managers fall back to it while no strategy service
 * is available; the {@code nodelet-store-get} bundle registers it as a service. A store tells its listener each
 * object a get returns and each one it does not find. It counts references only to tell when a registered object
 * was last read.
 */
public final class GetStrategy implements StoreStrategy {

  private record Key(String namespace, String name) {
  }

  /** The references to one object and its last read. */
  private static final class Usage {
    int references;
    volatile Instant lastAccess;
  }

  private final KubernetesClient client;
  private final Clock clock;

  /** @param client the client to ask; not closed by this strategy */
  public GetStrategy(KubernetesClient client) {
    this(client, Clock.systemUTC());
  }

  /**
   * @param client the client to ask; not closed by this strategy
   * @param clock the clock of the last access times
   * @since 1.4
   */
  public GetStrategy(KubernetesClient client, Clock clock) {
    this.client = Objects.requireNonNull(client, "client");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  @Override
  public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type,
      ObjectStore.Listener<? super T> listener) {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(listener, "listener");
    Map<Key, Usage> registered = new ConcurrentHashMap<>();
    return new ObjectStore<>() {
      @Override
      public void addReference(String namespace, String name, String podUid) {
        registered.compute(new Key(namespace, name), (k, usage) -> {
          Usage counted = usage == null ? new Usage() : usage;
          counted.references++;
          return counted;
        });
      }

      @Override
      public void deleteReference(String namespace, String name, String podUid) {
        registered.computeIfPresent(new Key(namespace, name), (k, usage) -> --usage.references == 0 ? null : usage);
      }

      @Override
      public T get(String namespace, String name) {
        Usage usage = registered.get(new Key(namespace, name));
        if (usage != null) {
          usage.lastAccess = clock.instant();
        }
        T object;
        try {
          object = client.resources(type.type()).inNamespace(namespace).withName(name).get();
        } catch (KubernetesClientException e) {
          throw ApiServerErrors.getFailed(type.plural(), namespace, name, e);
        }
        if (object == null) {
          listener.deleted(namespace, name, null);
          throw new ObjectNotFoundException(type.plural(), namespace, name);
        }
        T typed = type.cast(object);
        listener.changed(typed);
        return typed;
      }

      @Override
      public Optional<Instant> lastAccess(String namespace, String name) {
        Usage usage = registered.get(new Key(namespace, name));
        return usage == null ? Optional.empty() : Optional.ofNullable(usage.lastAccess);
      }

      @Override
      public void close() {
        // owns nothing
      }
    };
  }
}
