package dev.nodelet.pods.internal;

import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchEvent;
import dev.nodelet.objectcache.WatchOptions;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the managers' watches of the referenced ConfigMaps and Secrets and tells the pods' runtime which object
 * changed (never its content). A watch that ends (its consumer was too slow, the manager changed) is opened again.
 * Two threads, one per watch, whatever the number of pods; closing ends both.
 */
final class ObjectWatches implements AutoCloseable {

  /** Where a change goes. */
  interface Changes {
    void changed(boolean secret, String namespace, String name);
  }

  private static final Logger LOG = LoggerFactory.getLogger(ObjectWatches.class);

  private final ExecutorService threads = Executors.newFixedThreadPool(2, r -> {
    Thread thread = new Thread(r, "nodelet-pods-watch");
    thread.setDaemon(true);
    return thread;
  });
  private final List<Watch<?>> open = new ArrayList<>(); // guarded by this
  private boolean closed; // guarded by this

  <T extends HasMetadata> void follow(boolean secret, Function<WatchOptions<T>, Watch<T>> opener, Changes changes) {
    Watch<T> watch;
    synchronized (this) {
      if (closed) {
        return;
      }
      try {
        watch = opener.apply(WatchOptions.<T>builder().build());
      } catch (RuntimeException e) {
        LOG.warn("Cannot watch the referenced {}: {}", secret ? "Secrets" : "ConfigMaps", e.toString());
        return;
      }
      open.add(watch);
    }
    watch.forEachAsync(threads, (WatchEvent<T> event) -> {
      if (event.type() != WatchEvent.Type.BOOKMARK) {
        changes.changed(secret, event.object().getMetadata().getNamespace(), event.object().getMetadata().getName());
      }
    }).whenComplete((done, error) -> {
      synchronized (this) {
        open.remove(watch);
      }
      follow(secret, opener, changes); // does nothing once closed
    });
  }

  @Override
  public void close() {
    List<Watch<?>> watches;
    synchronized (this) {
      closed = true;
      watches = new ArrayList<>(open);
      open.clear();
    }
    watches.forEach(Watch::close);
    threads.shutdownNow();
    try {
      threads.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
