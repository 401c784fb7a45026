package dev.nodelet.dra.claims.internal;

import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimStatus;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The claims and device health of the claim manager, read from its status when scraped. Labels carry states,
 * driver names and health only, never claim, pod or device names.
 */
public final class ClaimsMetrics implements MultiCollector {

  private final ClaimStatus status;
  private final GaugeWithCallback claims;
  private final GaugeWithCallback health;

  /** @param status the claim manager in service */
  public ClaimsMetrics(ClaimStatus status) {
    this.status = status;
    claims = GaugeWithCallback.builder().name("nodelet_dra_claims")
        .help("ResourceClaims used by the pods of this node, by state: preparing, prepared, unpreparing, failed.")
        .labelNames("state")
        .callback(callback -> {
          Map<ClaimInfo.State, Integer> byState = new EnumMap<>(ClaimInfo.State.class);
          for (ClaimInfo.State state : ClaimInfo.State.values()) {
            byState.put(state, 0);
          }
          this.status.claims().forEach(claim -> byState.merge(claim.state(), 1, Integer::sum));
          byState.forEach((state, n) -> callback.call(n, state.name().toLowerCase(Locale.ROOT)));
        }).build();
    health = GaugeWithCallback.builder().name("nodelet_dra_device_health")
        .help("Devices whose health their driver reports, by driver and health: healthy, unhealthy, unknown (the"
            + " report timed out).")
        .labelNames("driver", "health")
        .callback(callback -> {
          Map<String, Map<DeviceHealth.Health, Integer>> byDriver = new TreeMap<>();
          this.status.health().forEach(device -> byDriver.computeIfAbsent(device.driver(), d -> {
            Map<DeviceHealth.Health, Integer> counts = new EnumMap<>(DeviceHealth.Health.class);
            for (DeviceHealth.Health h : DeviceHealth.Health.values()) {
              counts.put(h, 0);
            }
            return counts;
          }).merge(device.health(), 1, Integer::sum));
          byDriver.forEach((driver, counts) -> counts.forEach((h, n) ->
              callback.call(n, driver, h.name().toLowerCase(Locale.ROOT))));
        }).build();
  }

  @Override
  public MetricSnapshots collect() {
    return MetricSnapshots.of(claims.collect(), health.collect());
  }
}
