package dev.nodelet.pods.internal;

import dev.nodelet.pods.ContainerInfo;
import dev.nodelet.pods.ContainerInfo.BundleInfo;
import dev.nodelet.pods.PodInfo;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;

/** Copies the runtime's pods into immutable records; the copy is made on the pods' executor, which owns them. */
final class PodsSnapshot {

  /** How long a shell waits for the executor, busy at most with one pod's step (e.g. a download). */
  static final long TIMEOUT_SECONDS = 5;

  private PodsSnapshot() {
  }

  /**
   * @return the pods, by namespace and name; empty once the executor stopped
   * @throws IllegalStateException when the executor did not answer within {@value #TIMEOUT_SECONDS} s
   */
  static List<PodInfo> read(ScheduledExecutorService executor, Collection<PodState> pods, BundleContext context) {
    Future<List<PodInfo>> copy;
    try {
      copy = executor.submit(() -> pods.stream().map(p -> info(p, context))
          .sorted(Comparator.comparing(PodInfo::namespace).thenComparing(PodInfo::name)).toList());
    } catch (RejectedExecutionException e) {
      return List.of(); // the runtime closed
    }
    try {
      return copy.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      copy.cancel(false);
      throw new IllegalStateException("the pods' worker is busy (e.g. downloading an image) and did not answer in "
          + TIMEOUT_SECONDS + " s: try again");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading the pods", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("reading the pods failed: " + e.getCause(), e.getCause());
    }
  }

  static PodInfo info(PodState pod, BundleContext context) {
    String phase = pod.lastWritten == null || pod.lastWritten.getPhase() == null ? "Pending"
        : pod.lastWritten.getPhase();
    String reason = pod.rejection != null ? pod.rejection.reason() : pod.deleted ? "Terminating" : "";
    List<ContainerInfo> containers = new ArrayList<>();
    for (ContainerRun run : pod.containers) {
      containers.add(new ContainerInfo(run.name, run.image, ContainerInfo.State.valueOf(run.state.name()),
          run.state == ContainerRun.State.RUNNING || run.reason == null ? "" : run.reason,
          run.state == ContainerRun.State.RUNNING || run.message == null ? "" : run.message,
          run.startedAt, run.state == ContainerRun.State.TERMINATED ? run.finishedAt : null,
          run.state == ContainerRun.State.TERMINATED ? run.exitCode : 0, run.restartCount,
          run.state == ContainerRun.State.RUNNING, pod.pid(run), bundle(run.bundleId, context)));
    }
    return new PodInfo(pod.namespace(), pod.name(), pod.uid == null ? "" : pod.uid, phase, reason, containers);
  }

  private static Optional<BundleInfo> bundle(long id, BundleContext context) {
    Bundle bundle = id < 0 ? null : context.getBundle(id);
    if (bundle == null) {
      return Optional.empty();
    }
    String name = bundle.getSymbolicName();
    return Optional.of(new BundleInfo(id, name == null ? "" : name, bundle.getVersion().toString(),
        state(bundle.getState())));
  }

  private static String state(int state) {
    return switch (state) {
      case Bundle.INSTALLED -> "INSTALLED";
      case Bundle.RESOLVED -> "RESOLVED";
      case Bundle.STARTING -> "STARTING";
      case Bundle.ACTIVE -> "ACTIVE";
      case Bundle.STOPPING -> "STOPPING";
      default -> "UNINSTALLED";
    };
  }
}
