package dev.nodelet.shell.views;

import dev.nodelet.pods.ContainerInfo;
import dev.nodelet.pods.ContainerInfo.BundleInfo;
import dev.nodelet.pods.PodBundles;
import dev.nodelet.pods.PodInfo;
import dev.nodelet.pods.PodsStatus;
import java.util.List;

/**
 * The text of {@code nodelet:pods --bundles}, shared by the Gogo and the Karaf command: the pods Nodelet runs as
 * bundles, each container's state, restarts, readiness, image, bundle and configuration PID.
 */
public final class PodViews {

  /** What the commands print when no component runs pods as bundles. */
  public static final String OFF = "node mode pods are off: no component runs pods as bundles; a configuration "
      + PodBundles.PID + " (etc/" + PodBundles.PID + ".cfg, even an empty one) turns them on\n";

  private PodViews() {
  }

  /**
   * @param status the pods component's status; null when none runs
   * @param namespace only the pods of this namespace; null for all
   * @return {@link #OFF} without a status, else one line per pod (namespace/name, phase, reason, UID) and one per
   *     container below it
   */
  public static String pods(PodsStatus status, String namespace) {
    if (status == null) {
      return OFF;
    }
    List<PodInfo> pods = status.pods().stream()
        .filter(p -> namespace == null || p.namespace().equals(namespace)).toList();
    if (pods.isEmpty()) {
      return "no pods run as bundles" + (namespace == null ? "" : " in namespace " + namespace) + "\n";
    }
    StringBuilder out = new StringBuilder();
    for (PodInfo pod : pods) {
      out.append(pod.namespace()).append('/').append(pod.name()).append("  ").append(pod.phase());
      if (!pod.reason().isEmpty()) {
        out.append(" (").append(pod.reason()).append(')');
      }
      out.append("  uid=").append(pod.uid().isEmpty() ? "-" : pod.uid()).append('\n');
      for (ContainerInfo container : pod.containers()) {
        out.append("  ").append(container.name()).append("  ").append(state(container))
            .append("  restarts=").append(container.restartCount())
            .append("  ready=").append(container.ready())
            .append("  image=").append(container.image())
            .append("  bundle=").append(container.bundle().map(PodViews::bundle).orElse("-"))
            .append("  pid=").append(container.configurationPid()).append('\n');
      }
    }
    return out.toString();
  }

  /** {@code waiting <reason>[: <message>]}, {@code running since <time>} or {@code terminated <reason> ...}. */
  static String state(ContainerInfo c) {
    return switch (c.state()) {
      case RUNNING -> "running since " + c.startedAt();
      case TERMINATED -> "terminated " + c.reason() + " exit=" + c.exitCode()
          + (c.finishedAt() == null ? "" : " at " + c.finishedAt()) + message(c);
      case WAITING -> "waiting " + c.reason() + message(c);
    };
  }

  private static String message(ContainerInfo c) {
    return c.message().isEmpty() ? "" : ": " + c.message().replaceAll("\\s+", " ");
  }

  private static String bundle(BundleInfo b) {
    return b.id() + " " + (b.symbolicName().isEmpty() ? "-" : b.symbolicName()) + " " + b.version() + " "
        + b.state();
  }
}
