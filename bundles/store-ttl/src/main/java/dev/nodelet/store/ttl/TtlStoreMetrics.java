package dev.nodelet.store.ttl;

import dev.nodelet.store.ttl.internal.TtlMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/**
 * The metrics of the TTL stores of the strategies built with it ({@link TtlStoreStrategy.Builder#metrics}): syncs,
 * sync failures and stale copies served, by resource. Register it with a Prometheus registry (or, in OSGi, as a
 * {@link MultiCollector} service) once, and give it to each strategy built one after another so that the counts go
 * on.
 *
 * @since 1.3
 */
public final class TtlStoreMetrics implements MultiCollector {

  private final TtlMetrics metrics = new TtlMetrics();

  @Override
  public MetricSnapshots collect() {
    return metrics.collect();
  }

  TtlMetrics instruments() {
    return metrics;
  }
}
