package dev.nodelet.pods;

import java.time.Instant;
import java.util.Optional;

/**
 * One container of a pod as Nodelet runs it: its state in the kubelet's terms and the bundle that runs it.
 *
 * @param name the container's name
 * @param image the container's image as the pod names it
 * @param state waiting, running or terminated
 * @param reason why it waits ({@code ContainerCreating}, {@code ImagePullBackOff}, {@code CrashLoopBackOff}...) or
 *     why it terminated ({@code Completed}, {@code Error}); empty while running
 * @param message the message of that reason; empty without one (never Secret data)
 * @param startedAt when it started running or, terminated, when its last run started; null if never
 * @param finishedAt when it terminated; null unless terminated
 * @param exitCode the exit code when terminated (0: the bundle stopped itself, 1: it failed to start), else 0
 * @param restartCount how often it was restarted
 * @param ready whether it counts as ready
 * @param configurationPid the configuration PID its environment is delivered under
 * @param bundle the bundle that runs it; empty before one is installed
 */
public record ContainerInfo(String name, String image, State state, String reason, String message,
    Instant startedAt, Instant finishedAt, int exitCode, int restartCount, boolean ready, String configurationPid,
    Optional<BundleInfo> bundle) {

  /** The kubelet's container states. */
  public enum State { WAITING, RUNNING, TERMINATED }

  /**
   * A container's bundle.
   *
   * @param id the bundle's id
   * @param symbolicName its symbolic name; empty if the bundle has none
   * @param version its version
   * @param state its state: {@code INSTALLED}, {@code RESOLVED}, {@code STARTING}, {@code ACTIVE}, {@code STOPPING}
   *     or {@code UNINSTALLED}
   */
  public record BundleInfo(long id, String symbolicName, String version, String state) {
  }
}
