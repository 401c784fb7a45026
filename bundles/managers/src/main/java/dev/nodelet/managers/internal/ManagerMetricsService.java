package dev.nodelet.managers.internal;

import dev.nodelet.cache.core.ManagerMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import org.osgi.service.component.annotations.Component;

/**
 * The metrics of the managers of this bundle as a {@link MultiCollector} service, so that they come and go with the
 * bundle; the managers record into the same {@link ManagerMetrics}.
 */
@Component(service = {MultiCollector.class, ManagerMetricsService.class})
public final class ManagerMetricsService implements MultiCollector {

  private final ManagerMetrics metrics;

  /** Times one get in {@value ManagerMetrics#GET_SAMPLING}. */
  public ManagerMetricsService() {
    this(new ManagerMetrics());
  }

  ManagerMetricsService(ManagerMetrics metrics) {
    this.metrics = metrics;
  }

  @Override
  public MetricSnapshots collect() {
    return metrics.collect();
  }

  /** @return what the managers record into */
  ManagerMetrics metrics() {
    return metrics;
  }
}
