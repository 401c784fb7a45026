package dev.nodelet.pods.internal;

import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Stops and uninstalls containers' bundles within their pod's grace period, as the kubelet stops a container and
 * kills it once the grace is over. A bundle's stop (its activator's {@code stop}, its components' deactivation) runs
 * on a thread of its own, so that a stop that hangs holds nothing past the grace: the container is then considered
 * killed, and its thread keeps waiting for the stop to return to uninstall the bundle. Threads are made when needed
 * and end after a second idle; closing ends the idle ones.
 */
final class BoundedStop implements AutoCloseable {

  /** The kubelet's {@code minimumGracePeriodInSeconds}: a container always gets this long to stop. */
  static final Duration MINIMUM_GRACE = Duration.ofSeconds(2);
  /** The API's default {@code terminationGracePeriodSeconds}. */
  static final Duration DEFAULT_GRACE = Duration.ofSeconds(30);

  private final AtomicInteger count = new AtomicInteger();
  private final ThreadPoolExecutor threads = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 1, TimeUnit.SECONDS,
      new SynchronousQueue<>(), r -> {
        Thread thread = new Thread(r, "nodelet-pod-stop-" + count.incrementAndGet());
        thread.setDaemon(true);
        return thread;
      });

  /**
   * The grace a pod's containers get to stop, as the kubelet computes it: the pod's
   * {@code deletionGracePeriodSeconds} once it is being deleted, else its {@code terminationGracePeriodSeconds},
   * else 30 s; never less than 2 s.
   *
   * @param pod the pod; null for a pod no longer known (the default)
   */
  static Duration grace(Pod pod) {
    Long seconds = null;
    if (pod != null && pod.getMetadata() != null && pod.getMetadata().getDeletionTimestamp() != null) {
      seconds = pod.getMetadata().getDeletionGracePeriodSeconds();
    }
    if (seconds == null && pod != null && pod.getSpec() != null) {
      seconds = pod.getSpec().getTerminationGracePeriodSeconds();
    }
    Duration grace = seconds == null ? DEFAULT_GRACE : Duration.ofSeconds(seconds);
    return grace.compareTo(MINIMUM_GRACE) < 0 ? MINIMUM_GRACE : grace;
  }

  /**
   * Runs a stop on a thread of its own.
   *
   * @param stop stops and uninstalls one bundle
   * @return its completion, or null if this is closed (the stop then ran on the caller's thread)
   */
  Future<?> start(Runnable stop) {
    try {
      return threads.submit(stop);
    } catch (RejectedExecutionException e) {
      stop.run();
      return null;
    }
  }

  /**
   * Waits for a stop until the deadline.
   *
   * @param stop what {@link #start} returned
   * @param deadline {@link System#nanoTime()} at the end of the grace
   * @return true if it ended in time
   */
  static boolean await(Future<?> stop, long deadline) {
    if (stop == null) {
      return true;
    }
    try {
      stop.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      return true;
    } catch (java.util.concurrent.TimeoutException e) {
      return false;
    } catch (java.util.concurrent.ExecutionException e) {
      return true; // the stop logged its own failure
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Ends the idle threads; a stop still running keeps its thread until its bundle's stop returns. */
  @Override
  public void close() {
    threads.shutdown();
  }
}
