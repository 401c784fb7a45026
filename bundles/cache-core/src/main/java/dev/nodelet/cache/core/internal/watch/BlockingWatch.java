package dev.nodelet.cache.core.internal.watch;

import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchEvent;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

/** The ways a consumer reads a {@link Watch} (poll, iteration, a listener on an executor), over one blocking take. */
abstract class BlockingWatch<T extends HasMetadata> implements Watch<T> {

  /**
   * Takes the next event, waiting for one if none is there. An interrupted thread gets the exception even if an event
   * is there, so that a consumer loop ends on an interrupt however busy the watch is.
   *
   * @param nanos how long to wait at most
   * @param forever wait until an event comes or the watch ends, ignoring {@code nanos}
   * @return the event; null if the watch has ended or the time passed
   */
  abstract WatchEvent<T> take(long nanos, boolean forever) throws InterruptedException;

  @Override
  public WatchEvent<T> poll(Duration timeout) throws InterruptedException {
    return take(timeout.toNanos(), false);
  }

  @Override
  public Iterator<WatchEvent<T>> iterator() {
    return new Iterator<>() {
      private WatchEvent<T> next;

      @Override
      public boolean hasNext() {
        if (next == null) {
          try {
            next = take(0, true);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        return next != null;
      }

      @Override
      public WatchEvent<T> next() {
        if (!hasNext()) {
          throw new NoSuchElementException("the watch has ended");
        }
        WatchEvent<T> event = next;
        next = null;
        return event;
      }
    };
  }

  @Override
  public CompletableFuture<Void> forEachAsync(Executor executor, Consumer<? super WatchEvent<T>> listener) {
    return CompletableFuture.runAsync(() -> {
      try {
        forEach(listener);
      } catch (RuntimeException | Error e) {
        close();
        throw e;
      }
    }, executor);
  }
}
