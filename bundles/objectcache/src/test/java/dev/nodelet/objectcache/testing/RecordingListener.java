package dev.nodelet.objectcache.testing;

import dev.nodelet.objectcache.ObjectStore;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.ArrayList;
import java.util.List;

/**
 * A store listener that writes what it hears as {@code "changed ns/name@rv"} and {@code "deleted ns/name@rv"}
 * ({@code @null} for an unknown version); shared by the store modules through this module's test jar.
 */
public final class RecordingListener<T extends HasMetadata> implements ObjectStore.Listener<T> {

  private final List<String> heard = new ArrayList<>();

  @Override
  public synchronized void changed(T object) {
    heard.add("changed " + object.getMetadata().getNamespace() + "/" + object.getMetadata().getName() + "@"
        + object.getMetadata().getResourceVersion());
  }

  @Override
  public synchronized void deleted(String namespace, String name, String resourceVersion) {
    heard.add("deleted " + namespace + "/" + name + "@" + resourceVersion);
  }

  /** @return what was heard since the last {@link #take()}, in order */
  public synchronized List<String> heard() {
    return List.copyOf(heard);
  }

  /** @return what was heard since the last call, in order */
  public synchronized List<String> take() {
    List<String> taken = List.copyOf(heard);
    heard.clear();
    return taken;
  }
}
