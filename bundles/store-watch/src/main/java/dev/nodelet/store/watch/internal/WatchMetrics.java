package dev.nodelet.store.watch.internal;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** The instruments of the watch stores of one strategy service, labelled by resource only. */
public final class WatchMetrics {

  private static final double NANOS_PER_SECOND = 1e9;

  private final Set<WatchObjectStore<?>> stores = ConcurrentHashMap.newKeySet();
  private final Counter syncs = Counter.builder().name("nodelet_store_watch_syncs_total")
      .help("Syncs (a WatchList or a LIST) of an object of the watch store: its first, or a relist.").labelNames("resource")
      .withoutExemplars().build();
  private final Counter syncFailures = Counter.builder().name("nodelet_store_watch_sync_failures_total")
      .help("Syncs of the watch store that failed; the reflector tries again after its backoff.")
      .labelNames("resource").withoutExemplars().build();
  private final Counter relists = Counter.builder().name("nodelet_store_watch_relists_total")
      .help("Syncs started again after a failed sync or a 410 Gone watch.").labelNames("resource")
      .withoutExemplars().build();
  private final Counter restarts = Counter.builder().name("nodelet_store_watch_restarts_total")
      .help("Watches open again from the last resourceVersion after they ended (timeout, cut, failure).")
      .labelNames("resource").withoutExemplars().build();
  private final Histogram propagation = Histogram.builder().name("nodelet_store_watch_propagation_delay_seconds")
      .help("Time from a watch event's arrival to its object being visible to gets.").labelNames("resource")
      .classicOnly().classicExponentialUpperBounds(1e-6, 4, 12).withoutExemplars().build();
  private final GaugeWithCallback watches = GaugeWithCallback.builder().name("nodelet_store_watch_open_watches")
      .help("Objects of the watch stores whose watch is up: one reflector each, its last request not failed.").labelNames("resource")
      .callback(callback -> stores.forEach(store -> callback.call(store.openWatches(), store.resource())))
      .build();
  private final GaugeWithCallback objects = GaugeWithCallback.builder().name("nodelet_store_watch_objects")
      .help("Objects of the watch stores by how they are kept: watched (a watch is open) or polled (the watch "
          + "budget, max.watches, is spent: served by GETs with a time-to-live).").labelNames("resource", "state")
      .callback(callback -> stores.forEach(store -> {
        callback.call(store.openWatches(), store.resource(), "watched");
        callback.call(store.polledObjects(), store.resource(), "polled");
      })).build();
  private final Counter polls = Counter.builder().name("nodelet_store_watch_polled_fetches_total")
      .help("GETs of polled objects (beyond the watch budget) whose copy was older than the time-to-live.")
      .labelNames("resource").withoutExemplars().build();
  private final Counter pollFailures = Counter.builder().name("nodelet_store_watch_polled_fetch_failures_total")
      .help("GETs of polled objects that failed; the copy held, if any, is served stale.").labelNames("resource")
      .withoutExemplars().build();
  private final Counter moves = Counter.builder().name("nodelet_store_watch_budget_moves_total")
      .help("Objects moved by the watch budget: to=polled (no room, or its watch went to a more recently used "
          + "object), to=watched (read again soon, or room freed).").labelNames("resource", "to")
      .withoutExemplars().build();

  /** @return the current values */
  public MetricSnapshots collect() {
    return MetricSnapshots.of(syncs.collect(), syncFailures.collect(), relists.collect(), restarts.collect(),
        propagation.collect(), watches.collect(), objects.collect(), polls.collect(), pollFailures.collect(),
        moves.collect());
  }

  /** The data points of one store, looked up once. */
  final class Recorder {
    final CounterDataPoint synced;
    final CounterDataPoint syncFailed;
    final CounterDataPoint relisted;
    final CounterDataPoint restarted;
    final CounterDataPoint polled;
    final CounterDataPoint pollFailed;
    final CounterDataPoint toPolled;
    final CounterDataPoint toWatched;
    private final DistributionDataPoint delay;

    private Recorder(String resource) {
      synced = syncs.labelValues(resource);
      syncFailed = syncFailures.labelValues(resource);
      relisted = relists.labelValues(resource);
      restarted = restarts.labelValues(resource);
      polled = polls.labelValues(resource);
      pollFailed = pollFailures.labelValues(resource);
      toPolled = moves.labelValues(resource, "polled");
      toWatched = moves.labelValues(resource, "watched");
      delay = propagation.labelValues(resource);
    }

    /** An event that arrived at {@code receivedNanos} is visible to gets now. */
    void visible(long receivedNanos) {
      delay.observe((System.nanoTime() - receivedNanos) / NANOS_PER_SECOND);
    }
  }

  /** @return the data points of the stores of one resource */
  Recorder recorder(String resource) {
    return new Recorder(resource);
  }

  /** The store's gauges are read from now on. */
  void opened(WatchObjectStore<?> store) {
    stores.add(store);
  }

  void closed(WatchObjectStore<?> store) {
    stores.remove(store);
  }
}
