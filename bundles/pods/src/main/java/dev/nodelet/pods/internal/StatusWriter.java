package dev.nodelet.pods.internal;

import dev.nodelet.controller.Backoff;
import dev.nodelet.controller.Scheduler;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pods' status writes, as the kubelet's status manager makes them: off the pods' work thread, a few at a time
 * (one per pod at most), the newest status of a pod wins over one not sent yet, a failed write is tried again
 * after a back-off (1 s doubling to 30 s) with the newest status then. Outcomes that the work needs (a pod gone,
 * every status of a pod written) are handed to the work's executor.
 */
final class StatusWriter implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(StatusWriter.class);
  static final Duration RETRY = Duration.ofSeconds(1);
  static final Duration MAX_RETRY = Duration.ofSeconds(30);

  private final PodApi api;
  private final Scheduler timers;
  private final Executor work;
  private final Consumer<String> gone; // the UID of a pod the API server no longer has under its name
  private final ThreadPoolExecutor senders;
  private final Map<String, Entry> entries = new HashMap<>(); // by UID; guarded by this
  private int busy; // entries queued or sending; guarded by this
  private boolean closed; // guarded by this

  /**
   * @param api the API server
   * @param timers the retries' timers
   * @param work where the outcomes go: the pods' work executor
   * @param gone told (on {@code work}) the UID of a pod whose write found it gone or replaced
   * @param inFlight the most writes at once
   */
  StatusWriter(PodApi api, Scheduler timers, Executor work, Consumer<String> gone, int inFlight) {
    this.api = api;
    this.timers = timers;
    this.work = work;
    this.gone = gone;
    this.senders = new ThreadPoolExecutor(inFlight, inFlight, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
        r -> {
          Thread thread = new Thread(r, "nodelet-pods-status");
          thread.setDaemon(true);
          return thread;
        });
    senders.allowCoreThreadTimeOut(true); // no thread kept for long while nothing is written
  }

  /** Queues the pod's newest status; never blocks. A status not sent yet is replaced. */
  synchronized void write(Pod pod, PodStatus status) {
    if (closed) {
      return;
    }
    Entry entry = entries.computeIfAbsent(pod.getMetadata().getUid(), uid -> new Entry(uid));
    entry.pod = pod;
    entry.pending = status;
    if (!entry.queued && !entry.sending && entry.retry == null) {
      queue(entry);
    }
  }

  /**
   * Runs {@code then} once every status queued for the pod is written (or the pod found gone): at once on the
   * caller's thread when nothing is queued, else later on the work executor.
   */
  void whenWritten(String uid, Runnable then) {
    synchronized (this) {
      Entry entry = entries.get(uid);
      if (entry != null && (entry.pending != null || entry.sending)) {
        entry.then.add(then);
        return;
      }
    }
    then.run();
  }

  /** Forgets the pod (it left the node): what it had queued is not written. */
  synchronized void forget(String uid) {
    Entry entry = entries.remove(uid);
    if (entry != null) {
      if (entry.retry != null) {
        entry.retry.cancel();
      }
      if (entry.queued) {
        entry.queued = false;
        idle(-1);
      }
    }
  }

  /** @return whether a write of the pod failed and waits for its retry */
  synchronized boolean retrying(String uid) {
    Entry entry = entries.get(uid);
    return entry != null && entry.retry != null;
  }

  /** @return true once no write is queued or under way (writes waiting for a retry aside), false on timeout */
  synchronized boolean awaitQuiet(Duration timeout) throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (busy > 0) {
      long left = end - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      TimeUnit.NANOSECONDS.timedWait(this, left);
    }
    return true;
  }

  synchronized boolean quiet() {
    return busy == 0;
  }

  private void queue(Entry entry) { // holding this
    entry.queued = true;
    busy++;
    try {
      senders.execute(() -> send(entry));
    } catch (RejectedExecutionException e) {
      entry.queued = false; // closing
      idle(-1);
    }
  }

  private void send(Entry entry) {
    Pod pod;
    PodStatus status;
    synchronized (this) {
      if (!entry.queued || entries.get(entry.uid) != entry) {
        return; // forgotten meanwhile
      }
      entry.queued = false;
      pod = entry.pod;
      status = entry.pending;
      entry.pending = null;
      if (status == null || same(status, entry.written)) {
        finished(entry);
        idle(-1);
        return;
      }
      entry.sending = true;
    }
    PodApi.Outcome outcome;
    try {
      outcome = api.writeStatus(pod, status);
    } catch (RuntimeException e) {
      LOG.warn("Writing the status of pod {}/{} failed, retrying", pod.getMetadata().getNamespace(),
          pod.getMetadata().getName(), e);
      outcome = PodApi.Outcome.RETRY;
    }
    synchronized (this) {
      entry.sending = false;
      boolean current = entries.get(entry.uid) == entry;
      switch (outcome) {
        case DONE -> {
          entry.written = status;
          entry.backoff.reset();
          if (current && entry.pending != null) {
            queue(entry);
          } else {
            finished(entry);
          }
        }
        case GONE -> {
          entry.pending = null;
          entries.remove(entry.uid);
          if (current) {
            handOver(() -> gone.accept(entry.uid));
          }
          finished(entry);
        }
        default -> {
          if (entry.pending == null) {
            entry.pending = status; // nothing newer: this one again
          }
          if (current && !closed) {
            Duration delay = entry.backoff.failed(timers.nanoTime());
            try {
              entry.retry = timers.schedule(() -> retry(entry), delay);
            } catch (RejectedExecutionException e) {
              // closing
            }
          }
        }
      }
      idle(-1);
    }
  }

  private synchronized void retry(Entry entry) {
    entry.retry = null;
    if (entries.get(entry.uid) == entry && entry.pending != null && !entry.queued && !entry.sending) {
      queue(entry);
    }
  }

  /** Every status of the entry is written, or it is gone: what waited for that goes to the work. */
  private void finished(Entry entry) { // holding this
    for (Runnable then : entry.then) {
      handOver(then);
    }
    entry.then.clear();
  }

  private void handOver(Runnable task) {
    try {
      work.execute(task);
    } catch (RejectedExecutionException e) {
      // closing
    }
  }

  private void idle(int change) { // holding this
    busy += change;
    if (busy == 0) {
      notifyAll();
    }
  }

  /** Compares as the API server stores it: the JSON. */
  static boolean same(PodStatus a, PodStatus b) {
    return b != null && Serialization.asJson(a).equals(Serialization.asJson(b));
  }

  /** Stops the senders; writes not sent yet are dropped. */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      entries.values().forEach(e -> {
        if (e.retry != null) {
          e.retry.cancel();
        }
      });
    }
    senders.shutdownNow();
    try {
      senders.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** One pod's writes. Guarded by the writer. */
  private static final class Entry {
    final String uid;
    final Backoff backoff = Backoff.exponential(RETRY, MAX_RETRY).build();
    final List<Runnable> then = new ArrayList<>();
    Pod pod;
    PodStatus pending; // the newest status not sent yet; null: none
    PodStatus written; // the last status written by this writer
    boolean queued; // handed to the senders
    boolean sending;
    Scheduler.Task retry; // the timer of a retry; null: none

    Entry(String uid) {
      this.uid = uid;
    }
  }
}
