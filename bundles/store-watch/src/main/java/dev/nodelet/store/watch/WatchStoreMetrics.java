package dev.nodelet.store.watch;

import dev.nodelet.store.watch.internal.WatchMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/**
 * The metrics of the watch stores of the strategies built with it ({@link WatchStoreStrategy.Builder#metrics}):
 * syncs and sync failures, relists, watch restarts, open watches and the propagation delay, by resource. Register it
 * with a Prometheus registry (or, in OSGi, as a {@link MultiCollector} service) once, and give it to each strategy
 * built one after another so that the counts go on.
 *
 * @since 1.2
 */
public final class WatchStoreMetrics implements MultiCollector {

  private final WatchMetrics metrics = new WatchMetrics();

  @Override
  public MetricSnapshots collect() {
    return metrics.collect();
  }

  WatchMetrics instruments() {
    return metrics;
  }
}
