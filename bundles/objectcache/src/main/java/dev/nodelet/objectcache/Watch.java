package dev.nodelet.objectcache;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A running watch on a cache: a stream of {@link WatchEvent}s with the API server's watch semantics.
 *
 * <p>Events are buffered per watch (see {@link WatchOptions#bufferSize()}). A consumer that does not keep up is
 * closed by the cache rather than allowed to slow down other watches; the events already buffered for it can still
 * be taken, then the watch ends. A client that needs to go on starts a new watch at the resource version of the last
 * event or bookmark it received.
 *
 * <p>Three ways to consume, all drawing from the same single stream (an event is delivered once):
 * <ul>
 *   <li>{@link #poll(Duration)}: wait at most a given time for the next event;</li>
 *   <li>{@link #iterator()} (so {@code for (WatchEvent<T> e : watch)} and {@link #forEach(Consumer)}): block until
 *       the next event, until the watch ends;</li>
 *   <li>{@link #forEachAsync(Executor, Consumer)}: the same callback loop on an executor of the caller's.</li>
 * </ul>
 * The watch owns no thread. Methods are safe to call from any thread; consume from one thread at a time.
 *
 * @param <T> the Kubernetes type of the objects
 */
@ProviderType
public interface Watch<T extends HasMetadata> extends Iterable<WatchEvent<T>>, AutoCloseable {

  /**
   * Takes the next event, waiting at most {@code timeout} for one.
   *
   * @param timeout how long to wait; zero or negative does not wait
   * @return the next event, or {@code null} if none came in time or the watch {@link #isEnded() ended}
   * @throws InterruptedException if the thread was interrupted while waiting
   */
  WatchEvent<T> poll(Duration timeout) throws InterruptedException;

  /**
   * Returns a blocking iterator over the remaining events: {@code hasNext()} waits for the next event and answers
   * {@code false} once the watch has ended. If the waiting thread is interrupted, {@code hasNext()} answers
   * {@code false} with the interrupt flag set; the watch stays open.
   *
   * @return an iterator over this watch's single stream
   */
  @Override
  Iterator<WatchEvent<T>> iterator();

  /**
   * Runs {@link #forEach(Consumer) forEach(listener)} on {@code executor}. If the listener throws, the watch is
   * closed and the returned future fails with that exception.
   *
   * @param executor where the callback loop runs; it occupies one of its threads until the watch ends
   * @param listener called once per event, in order
   * @return a future that completes when the watch has ended and every event has been handed to the listener
   */
  CompletableFuture<Void> forEachAsync(Executor executor, Consumer<? super WatchEvent<T>> listener);

  /** @return true once the watch is closed and every event buffered for it has been taken */
  boolean isEnded();

  /**
   * Stops the watch: no further event is delivered, events not taken yet are discarded, and a consumer waiting for
   * an event wakes up and sees the end. Idempotent.
   */
  @Override
  void close();
}
