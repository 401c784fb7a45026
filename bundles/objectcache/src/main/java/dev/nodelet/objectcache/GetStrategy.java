package dev.nodelet.objectcache;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Objects;

/**
 * The {@code get} strategy (the kubelet's "Get"): every get is a direct GET on the API server and references are not
 * tracked, so a get of an object no pod references succeeds too. Managers fall back to it while no strategy service
 * is available; the {@code nodelet-store-get} bundle registers it as a service. A store tells its listener each
 * object a get returns and each one it does not find.
 */
public final class GetStrategy implements StoreStrategy {

  private final KubernetesClient client;

  /** @param client the client to ask; not closed by this strategy */
  public GetStrategy(KubernetesClient client) {
    this.client = Objects.requireNonNull(client, "client");
  }

  @Override
  public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type) {
    return createStore(type, ObjectStore.Listener.none());
  }

  @Override
  public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type,
      ObjectStore.Listener<? super T> listener) {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(listener, "listener");
    return new ObjectStore<>() {
      @Override
      public void addReference(String namespace, String name, String podUid) {
        // nothing to track: every get asks the API server
      }

      @Override
      public void deleteReference(String namespace, String name, String podUid) {
        // nothing to track: every get asks the API server
      }

      @Override
      public T get(String namespace, String name) {
        T object = client.resources(type.type()).inNamespace(namespace).withName(name).get();
        if (object == null) {
          listener.deleted(namespace, name, null);
          throw new ObjectNotFoundException(type.plural(), namespace, name);
        }
        T typed = type.cast(object);
        listener.changed(typed);
        return typed;
      }

      @Override
      public void close() {
        // owns nothing
      }
    };
  }
}
