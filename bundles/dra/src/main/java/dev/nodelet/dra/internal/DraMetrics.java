package dev.nodelet.dra.internal;

import dev.nodelet.dra.DraStatus;
import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.SliceSummary;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The metrics of the DRA node controller: its writes and syncs as they happen, its drivers, slices and devices read
 * from its status when scraped. Labels carry driver names, states and verbs only.
 */
public final class DraMetrics {

  private final DraStatus status;
  private final Counter writes = Counter.builder().name("nodelet_dra_slice_writes_total")
      .help("ResourceSlice writes of the node controller, by verb: create, update, delete.").labelNames("verb")
      .withoutExemplars().build();
  private final CounterDataPoint creates = writes.labelValues("create");
  private final CounterDataPoint updates = writes.labelValues("update");
  private final CounterDataPoint deletes = writes.labelValues("delete");
  private final Histogram syncDuration = Histogram.builder().name("nodelet_dra_sync_duration_seconds")
      .help("Duration of one sync of a driver's ResourceSlices with its devices, writes included.")
      .classicOnly().classicExponentialUpperBounds(1e-4, 4, 10).withoutExemplars().build();
  private final Counter syncErrors = Counter.builder().name("nodelet_dra_sync_errors_total")
      .help("Syncs of a driver's ResourceSlices that failed and are retried with rate limiting.")
      .withoutExemplars().build();
  private final GaugeWithCallback drivers;
  private final GaugeWithCallback slices;
  private final GaugeWithCallback devices;

  /** @param status what the controller in service knows, read when scraped */
  public DraMetrics(DraStatus status) {
    this.status = status;
    drivers = GaugeWithCallback.builder().name("nodelet_dra_drivers")
        .help("DRA drivers the node controller knows, by state: self_publishing, monitoring, backing_off, stopped,"
            + " leaving, not_registered (a failed registration).").labelNames("state")
        .callback(callback -> {
          Map<DriverStatus.State, Integer> byState = new EnumMap<>(DriverStatus.State.class);
          for (DriverStatus.State state : DriverStatus.State.values()) {
            byState.put(state, 0);
          }
          this.status.drivers().forEach(driver -> byState.merge(driver.state(), 1, Integer::sum));
          byState.forEach((state, count) -> callback.call(count, state.name().toLowerCase(Locale.ROOT)));
        }).build();
    slices = GaugeWithCallback.builder().name("nodelet_dra_resource_slices")
        .help("ResourceSlices of this node, by driver.").labelNames("driver")
        .callback(callback -> perDriver(summary -> 1).forEach((driver, n) -> callback.call(n, driver))).build();
    devices = GaugeWithCallback.builder().name("nodelet_dra_devices")
        .help("Devices published in the ResourceSlices of this node, by driver.").labelNames("driver")
        .callback(callback -> perDriver(SliceSummary::devices).forEach((driver, n) -> callback.call(n, driver)))
        .build();
  }

  private Map<String, Long> perDriver(java.util.function.ToLongFunction<SliceSummary> count) {
    Map<String, Long> sums = new TreeMap<>();
    status.slices().forEach(slice -> sums.merge(slice.driver(), count.applyAsLong(slice), Long::sum));
    return sums;
  }

  /** @return the current values */
  public MetricSnapshots collect() {
    return MetricSnapshots.of(writes.collect(), syncDuration.collect(), syncErrors.collect(), drivers.collect(),
        slices.collect(), devices.collect());
  }

  void created() {
    creates.inc();
  }

  void updated() {
    updates.inc();
  }

  void deleted() {
    deletes.inc();
  }

  void synced(long startNanos, boolean failed) {
    syncDuration.observe((System.nanoTime() - startNanos) / 1e9);
    if (failed) {
      syncErrors.inc();
    }
  }
}
