package dev.nodelet.store.ttl.internal;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/** The instruments of the TTL stores of one strategy service, labelled by resource only. */
public final class TtlMetrics {

  private final Counter syncs = Counter.builder().name("nodelet_store_ttl_syncs_total")
      .help("Fetches that refreshed an object of the TTL store (found or not found).").labelNames("resource")
      .withoutExemplars().build();
  private final Counter syncFailures = Counter.builder().name("nodelet_store_ttl_sync_failures_total")
      .help("Fetches of the TTL store that failed; a copy fetched before is served stale until one succeeds.")
      .labelNames("resource").withoutExemplars().build();
  private final Counter staleServed = Counter.builder().name("nodelet_store_ttl_stale_served_total")
      .help("Gets answered with an expired copy because its fetch failed.").labelNames("resource")
      .withoutExemplars().build();

  /** @return the current values */
  public MetricSnapshots collect() {
    return MetricSnapshots.of(syncs.collect(), syncFailures.collect(), staleServed.collect());
  }

  /** The data points of one store, looked up once. */
  final class Recorder {
    final CounterDataPoint synced;
    final CounterDataPoint syncFailed;
    final CounterDataPoint servedStale;

    private Recorder(String resource) {
      synced = syncs.labelValues(resource);
      syncFailed = syncFailures.labelValues(resource);
      servedStale = staleServed.labelValues(resource);
    }
  }

  Recorder recorder(String resource) {
    return new Recorder(resource);
  }
}
