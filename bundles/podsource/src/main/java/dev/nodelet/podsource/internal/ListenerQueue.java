package dev.nodelet.podsource.internal;

import dev.nodelet.objectcache.PodListener;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pod events still to deliver to one listener, delivered in order by at most one pooled thread at a time.
 *
 * <p>Only the latest event per pod is kept: both calls are idempotent and a register carries the whole pod, so a
 * listener that falls behind skips intermediate versions instead of queueing them. The queue is thus bounded by the
 * number of pods on the node, whatever the listener's speed.
 */
public final class ListenerQueue {

  private static final Logger LOG = LoggerFactory.getLogger(ListenerQueue.class);

  private record Event(boolean register, Pod pod) {
  }

  private final PodListener listener;
  private final Executor executor;

  // guarded by this
  private final Map<PodKey, Event> pending = new LinkedHashMap<>();
  private boolean scheduled;
  private boolean cancelled;
  /** Events offered so far, and how many of them a listener call has returned from (or skipped as superseded). */
  private long offered;
  private long delivered;
  /** The count of offered events that make up the node's first list; -1 until it is known. */
  private long initial = -1;

  public ListenerQueue(PodListener listener, Executor executor) {
    this.listener = listener;
    this.executor = executor;
  }

  public void register(PodKey key, Pod pod) {
    offer(key, new Event(true, pod));
  }

  public void unregister(PodKey key, Pod pod) {
    offer(key, new Event(false, pod));
  }

  /** Marks every event offered so far as part of the node's first list of pods. */
  public synchronized void markInitial() {
    initial = offered;
  }

  /** @return whether the listener has returned from every call of the node's first list (see {@link #markInitial}) */
  public synchronized boolean initialDelivered() {
    return initial >= 0 && delivered >= initial;
  }

  /** Drops what is pending; a call in progress finishes. */
  public synchronized void cancel() {
    cancelled = true;
    pending.clear();
  }

  private synchronized void offer(PodKey key, Event event) {
    if (cancelled) {
      return;
    }
    // re-inserted at the end, so that events of different pods keep their order
    pending.remove(key);
    pending.put(key, event);
    offered++;
    schedule();
  }

  private void schedule() {
    if (scheduled || pending.isEmpty()) {
      return;
    }
    try {
      executor.execute(this::drain);
      scheduled = true;
    } catch (RejectedExecutionException e) {
      // the pod source is closing: nothing is delivered any more
      pending.clear();
    }
  }

  private void drain() {
    List<Event> batch;
    long upTo;
    synchronized (this) {
      batch = new ArrayList<>(pending.values());
      pending.clear();
      upTo = offered; // an event replaced by a later one of the same pod counts with the later one
    }
    try {
      for (Event event : batch) {
        synchronized (this) {
          if (cancelled) {
            return;
          }
        }
        deliver(event);
      }
    } finally {
      synchronized (this) {
        delivered = upTo;
        scheduled = false;
        // events that came during the batch queue up behind the other listeners' batches
        schedule();
      }
    }
  }

  private void deliver(Event event) {
    try {
      if (event.register()) {
        listener.registerPod(event.pod());
      } else {
        listener.unregisterPod(event.pod());
      }
    } catch (RuntimeException | LinkageError | StackOverflowError e) {
      // a listener's failure is its own: the other events of this batch and later ones are still delivered. A
      // LinkageError comes from a listener whose bundle was updated under it, a StackOverflowError from one that
      // recursed over a huge pod.
      LOG.warn("{} failed to {} pod {}: {}", listener.getClass().getName(),
          event.register() ? "register" : "unregister", PodKey.of(event.pod()), e.toString());
    }
  }
}
