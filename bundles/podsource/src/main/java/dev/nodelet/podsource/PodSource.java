package dev.nodelet.podsource;

import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.kube.watch.ReflectorListener;
import dev.nodelet.kube.watch.Reflectors;
import dev.nodelet.objectcache.PodListener;
import dev.nodelet.podsource.internal.ListenerQueue;
import dev.nodelet.podsource.internal.PodKey;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the pods with {@code spec.nodeName=<node>} and tells every listener: register on add and update,
 * unregister on delete. A listener added later first receives every pod known so far.
 *
 * <p>Each listener has its own {@link ListenerQueue}, served by a small shared pool: a slow listener holds at most
 * one pool thread and a failing one is logged and skipped, so with {@code n} threads up to {@code n - 1} slow
 * listeners cannot hold up the others. Pool threads end when idle for a while; {@link #close()} ends them all.
 *
 * <p>For plain Java programs and tests: {@link #builder}. In OSGi the {@code nodelet-podsource} bundle runs one for the
 * node of the {@code NodeIdentity} service and feeds it every {@link PodListener} service.
 */
public final class PodSource implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(PodSource.class);

  private static final long IDLE_THREAD_SECONDS = 30;
  private static final long CLOSE_WAIT_SECONDS = 5;

  private final Reflectors reflectors;
  private final String nodeName;
  private final ThreadPoolExecutor executor;

  // guarded by this
  private final Map<PodKey, Pod> pods = new LinkedHashMap<>();
  private final Map<PodListener, ListenerQueue> listeners = new IdentityHashMap<>();
  private Reflector<Pod> reflector;
  private boolean listed;

  private PodSource(Reflectors reflectors, String nodeName, int threads) {
    this.reflectors = reflectors;
    this.nodeName = nodeName;
    this.executor = new ThreadPoolExecutor(threads, threads, IDLE_THREAD_SECONDS, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), threadFactory());
    executor.allowCoreThreadTimeOut(true);
  }

  /** The most listener threads a pod source runs; more would only wait on the listeners' own locks. */
  public static final int MAX_THREADS = 64;

  /**
   * Starts building a pod source.
   *
   * @param reflectors the list/watch machinery to watch with; not closed by the pod source
   * @param nodeName the node whose pods to watch
   * @return a builder with two listener threads
   */
  public static Builder builder(Reflectors reflectors, String nodeName) {
    return new Builder(reflectors, nodeName);
  }

  /** Options of a pod source. */
  public static final class Builder {
    private final Reflectors reflectors;
    private final String nodeName;
    private int threads = 2;

    private Builder(Reflectors reflectors, String nodeName) {
      this.reflectors = Objects.requireNonNull(reflectors, "reflectors");
      this.nodeName = Objects.requireNonNull(nodeName, "nodeName");
    }

    /**
     * @param threads the number of threads that call listeners, 1 to {@value #MAX_THREADS}; 2 by default
     * @return this builder
     * @throws IllegalArgumentException if out of range, naming {@code listener.threads}
     */
    public Builder listenerThreads(int threads) {
      checkListenerThreads(threads);
      this.threads = threads;
      return this;
    }

    /** @return a pod source, not watching until {@link PodSource#start()} */
    public PodSource build() {
      return new PodSource(reflectors, nodeName, threads);
    }
  }

  /**
   * @param threads a number of listener threads
   * @throws IllegalArgumentException unless 1 to {@value #MAX_THREADS}, naming {@code listener.threads}
   */
  public static void checkListenerThreads(int threads) {
    if (threads < 1 || threads > MAX_THREADS) {
      throw new IllegalArgumentException(threads < 1 ? "listener.threads must be at least 1, was " + threads
          : "listener.threads must be at most " + MAX_THREADS + ", was " + threads);
    }
  }

  /**
   * Changes the number of listener threads; calls in progress finish on the threads they run on.
   *
   * @param threads 1 to {@value #MAX_THREADS}
   * @throws IllegalArgumentException if out of range, naming {@code listener.threads}
   */
  public synchronized void setListenerThreads(int threads) {
    checkListenerThreads(threads);
    // the core size may never exceed the maximum in between
    if (threads > executor.getMaximumPoolSize()) {
      executor.setMaximumPoolSize(threads);
      executor.setCorePoolSize(threads);
    } else {
      executor.setCorePoolSize(threads);
      executor.setMaximumPoolSize(threads);
    }
  }

  /** @return the number of listener threads */
  public int listenerThreads() {
    return executor.getMaximumPoolSize();
  }

  private static ThreadFactory threadFactory() {
    AtomicInteger count = new AtomicInteger();
    return r -> {
      Thread thread = new Thread(r, "nodelet-podsource-" + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }

  /**
   * Starts the watch without waiting for its first list.
   *
   * @throws IllegalStateException if started before
   */
  public synchronized void start() {
    if (reflector != null) {
      throw new IllegalStateException("the pod source is started already");
    }
    // the reflector retries with backoff, also when the first list fails, and logs the outage once
    reflector = reflectors.reflector(Pod.class).fieldSelector("spec.nodeName=" + nodeName)
        .listener(new ReflectorListener<>() {
          @Override
          public void onAdd(Pod pod) {
            added(pod);
          }

          @Override
          public void onUpdate(Pod old, Pod pod) {
            if (!PodKey.of(old).equals(PodKey.of(pod))) {
              deleted(old);
            }
            added(pod);
          }

          @Override
          public void onDelete(Pod pod) {
            deleted(pod);
          }

          @Override
          public void onSynced(String resourceVersion) {
            listed();
          }
        }).start();
    LOG.info("Watching the pods of node {}", nodeName);
  }

  private synchronized void listed() {
    if (!listed) {
      listed = true;
      listeners.values().forEach(ListenerQueue::markInitial);
    }
  }

  /**
   * Whether the pods of the node have been listed and every listener has returned from its calls for them (a listener
   * added later: for the pods known when it was added), so that what the listeners serve (the objects of those pods)
   * covers every pod on the node.
   *
   * @return true once the first list has reached every listener
   */
  public synchronized boolean isSynced() {
    return listed && listeners.values().stream().allMatch(ListenerQueue::initialDelivered);
  }

  private synchronized void added(Pod pod) {
    PodKey key = PodKey.of(pod);
    pods.put(key, pod);
    listeners.values().forEach(queue -> queue.register(key, pod));
  }

  private synchronized void deleted(Pod pod) {
    PodKey key = PodKey.of(pod);
    pods.remove(key);
    listeners.values().forEach(queue -> queue.unregister(key, pod));
  }

  /**
   * Adds a listener and registers every pod known so far with it.
   *
   * @param listener the listener; added once however often it is given
   */
  public synchronized void addListener(PodListener listener) {
    ListenerQueue queue = new ListenerQueue(listener, executor);
    if (listeners.putIfAbsent(listener, queue) == null) {
      pods.forEach(queue::register);
      if (listed) {
        queue.markInitial();
      }
    }
  }

  /**
   * Removes a listener; events not yet delivered to it are dropped.
   *
   * @param listener the listener
   */
  public synchronized void removeListener(PodListener listener) {
    ListenerQueue queue = listeners.remove(listener);
    if (queue != null) {
      queue.cancel();
    }
  }

  /** @return the pods of the node as the watch knows them now, in the order they were first seen */
  public synchronized List<Pod> pods() {
    return List.copyOf(pods.values());
  }

  /** Stops the watch and the listener threads, waiting a little for calls in progress. Idempotent. */
  @Override
  public void close() {
    synchronized (this) {
      if (reflector != null) {
        reflector.close(); // ends the watch at once, also one still in flight
      }
      listeners.values().forEach(ListenerQueue::cancel);
      listeners.clear();
    }
    executor.shutdown();
    try {
      if (!executor.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
        LOG.warn("A PodListener of node {} did not return within {} s; interrupting it", nodeName,
            CLOSE_WAIT_SECONDS);
        executor.shutdownNow();
      }
    } catch (InterruptedException e) {
      executor.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
