package dev.nodelet.shell.views;

import dev.nodelet.dra.PreparedDevice;
import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimStatus;
import dev.nodelet.dra.claims.ContainerDevices;
import java.util.List;
import java.util.stream.Collectors;

/** The text of the {@code nodelet:claims} shell command, shared by the Gogo and the Karaf command. */
public final class ClaimViews {

  private ClaimViews() {
  }

  /**
   * @param status the claim manager
   * @return one block per claim (state, pods, devices with CDI IDs, error), then one line per container claim
   *     entry (its CDI IDs; below it, when the container cannot get them, an {@code error:} line saying why), then
   *     the health of each reported device
   */
  public static String claims(ClaimStatus status) {
    StringBuilder out = new StringBuilder();
    status.checkpointProblem().ifPresent(p -> out.append("checkpoint: ").append(p).append('\n'));
    List<ClaimInfo> claims = status.claims();
    if (claims.isEmpty()) {
      out.append("no claims\n");
    }
    for (ClaimInfo c : claims) {
      out.append(c.namespace()).append('/').append(c.name()).append("  ").append(c.state())
          .append("  uid=").append(c.uid().isEmpty() ? "-" : c.uid())
          .append("  pods=").append(String.join(",", c.pods())).append('\n');
      c.devices().entrySet().stream().sorted(java.util.Map.Entry.comparingByKey()).forEach(e -> {
        for (PreparedDevice d : e.getValue()) {
          out.append("  ").append(e.getKey()).append('/').append(d.poolName()).append('/').append(d.deviceName())
              .append("  requests=").append(String.join(",", d.requestNames()))
              .append("  cdi=").append(String.join(",", d.cdiDeviceIds()));
          if (d.shareId() != null) {
            out.append("  share=").append(d.shareId());
          }
          out.append('\n');
        }
      });
      if (c.error() != null) {
        out.append("  error: ").append(c.error());
        if (c.nextRetry() != null) {
          out.append(" (retry at ").append(c.nextRetry()).append(')');
        }
        out.append('\n');
      }
    }
    for (ContainerDevices d : status.containers()) {
      out.append("container ").append(d.podNamespace()).append('/').append(d.podName()).append('/')
          .append(d.container()).append("  claim=").append(d.podClaim())
          .append(d.request() == null ? "" : "/" + d.request())
          .append("  cdi=").append(d.cdiDeviceIds().isEmpty() ? "-" : String.join(",", d.cdiDeviceIds()))
          .append('\n');
      if (!d.ready()) {
        // below its entry, as a claim's error: one line, whatever the driver's error spans
        out.append("  error: ").append(d.error().strip().replaceAll("\\s+", " ")).append('\n');
      }
    }
    out.append(status.health().stream().map(h -> "health " + h.driver() + "/" + h.pool() + "/" + h.device() + "  "
        + h.health() + (h.message().isEmpty() ? "" : "  " + h.message()) + "\n").collect(Collectors.joining()));
    return out.toString();
  }
}
