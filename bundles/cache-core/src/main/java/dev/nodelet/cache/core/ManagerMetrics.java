package dev.nodelet.cache.core;

import dev.nodelet.cache.core.internal.ManagerInstruments;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/**
 * The metrics of the managers built with it ({@link ObjectManagers.Builder#metrics}), one series per resource:
 * registered pods, referenced objects by strategy and state, get durations and errors, fan-out watchers, their queued
 * events and the slow watchers closed. What a manager keeps is read when scraped; gets are timed as they happen, one
 * in {@value #GET_SAMPLING} by default, since a cached get takes about as long as reading the clock twice. A manager
 * that closes takes its series with it. Register it with a Prometheus registry (or, in OSGi, as a
 * {@link MultiCollector} service) once, and give it to every manager.
 *
 * @since 1.1
 */
public final class ManagerMetrics implements MultiCollector {

  /** One get in this many is timed by default. */
  public static final int GET_SAMPLING = 64;

  private final ManagerInstruments instruments;

  /** Times one get in {@value #GET_SAMPLING}. */
  public ManagerMetrics() {
    this(GET_SAMPLING);
  }

  /**
   * @param sampling one get in this many is timed; a power of two (1 times every get)
   * @throws IllegalArgumentException if {@code sampling} is not a power of two
   */
  public ManagerMetrics(int sampling) {
    this.instruments = new ManagerInstruments(sampling);
  }

  @Override
  public MetricSnapshots collect() {
    return instruments.collect();
  }

  ManagerInstruments instruments() {
    return instruments;
  }
}
