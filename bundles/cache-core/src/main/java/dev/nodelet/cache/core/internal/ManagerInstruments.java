package dev.nodelet.cache.core.internal;

import dev.nodelet.objectcache.CacheSyncException;
import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.objectcache.WatchStatistics;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The metrics of the managers that record into them, one series per resource: what they keep is read when scraped,
 * the gets are timed as they happen. No label carries an object's name or namespace. The exported face is
 * {@link dev.nodelet.cache.core.ManagerMetrics}.
 */
public final class ManagerInstruments {

  static final double NANOS_PER_SECOND = 1e9;
  /** The start time of a get that is not timed. */
  static final long NOT_TIMED = Long.MIN_VALUE;

  private final List<ObjectManager<?>> managers = new CopyOnWriteArrayList<>();
  private final int sampling;

  private final Histogram getDuration;
  private final Counter getErrors = Counter.builder().name("nodelet_manager_get_errors_total")
      .help("Gets a manager answered with an error, by reason: not_registered, not_found, sync_failed, other.")
      .labelNames("resource", "reason").withoutExemplars().build();
  private final GaugeWithCallback pods = GaugeWithCallback.builder().name("nodelet_manager_registered_pods")
      .help("Pods registered with a manager.").labelNames("resource")
      .callback(callback -> managers.forEach(m -> callback.call(m.registeredPods().size(), m.type().plural())))
      .build();
  private final GaugeWithCallback objects = GaugeWithCallback.builder().name("nodelet_manager_objects")
      .help("Objects that registered pods reference, by the strategy whose store keeps them and what the store does"
          + " about them: running (watched or kept fresh), idle, stopped, immutable, from_disk (the copy a previous run stored, not confirmed by the API server yet; also objects that only pods of that run reference), polled (beyond the watch budget: served by GETs with a time-to-live), or unknown.")
      .labelNames("resource", "strategy", "state")
      .callback(callback -> managers.forEach(m -> objectCounts(m).forEach((key, count) ->
          callback.call(count, m.type().plural(), key.strategy(), key.state()))))
      .build();
  private final GaugeWithCallback watchers = GaugeWithCallback.builder().name("nodelet_manager_watchers")
      .help("Watches open on a manager's fan-out.").labelNames("resource")
      .callback(callback -> managers.forEach(m -> callback.call(m.watchStatistics().watchers(), m.type().plural())))
      .build();
  private final GaugeWithCallback queuedEvents = GaugeWithCallback.builder()
      .name("nodelet_manager_watch_queued_events")
      .help("Events the watches of a manager's fan-out hold for their consumers, all watches together.")
      .labelNames("resource")
      .callback(callback -> managers.forEach(m -> callback.call(m.watchStatistics().queuedEvents(),
          m.type().plural())))
      .build();
  private final GaugeWithCallback longestQueue = GaugeWithCallback.builder()
      .name("nodelet_manager_watch_queued_events_max")
      .help("The most events one watch of a manager's fan-out holds for its consumer; a watch whose input and result"
          + " buffers are both full is closed as too slow.")
      .labelNames("resource")
      .callback(callback -> managers.forEach(m -> callback.call(m.watchStatistics().longestQueue(),
          m.type().plural())))
      .build();
  private final CounterWithCallback slowWatchers = CounterWithCallback.builder()
      .name("nodelet_manager_slow_watchers_closed_total")
      .help("Watches the fan-out closed because their consumer did not keep up.").labelNames("resource")
      .callback(callback -> managers.forEach(m -> {
        WatchStatistics statistics = m.watchStatistics();
        callback.call(statistics.terminatedWatchers(), m.type().plural());
      }))
      .build();

  /** @param sampling one get in this many is timed; a power of two (tests time every get with 1) */
  public ManagerInstruments(int sampling) {
    if (Integer.bitCount(sampling) != 1) {
      throw new IllegalArgumentException("sampling must be a power of two, was " + sampling);
    }
    this.sampling = sampling;
    this.getDuration = Histogram.builder().name("nodelet_manager_get_duration_seconds")
        .help("Duration of the gets a manager answered, successful or not; one get in " + sampling + " is timed.")
        .labelNames("resource")
        // from a microsecond (a cached get) to seconds (a get that waits for a sync)
        .classicOnly().classicExponentialUpperBounds(1e-6, 4, 12).withoutExemplars().build();
  }

  /** @return the current values */
  public MetricSnapshots collect() {
    return MetricSnapshots.of(getDuration.collect(), getErrors.collect(), pods.collect(), objects.collect(),
        watchers.collect(), queuedEvents.collect(), longestQueue.collect(), slowWatchers.collect());
  }

  /**
   * Starts reporting a manager.
   *
   * @return what records its gets
   */
  public Recorder add(ObjectManager<?> manager) {
    managers.add(manager);
    return new Recorder(manager.type().plural());
  }

  /** Stops reporting a manager; its series go. */
  public void remove(ObjectManager<?> manager) {
    managers.remove(manager);
    String resource = manager.type().plural();
    if (managers.stream().noneMatch(m -> m.type().plural().equals(resource))) {
      getDuration.remove(resource);
      getErrors.removeIf(labels -> labels.get(0).equals(resource));
    }
  }

  private record ObjectKey(String strategy, String state) {
  }

  private static Map<ObjectKey, Long> objectCounts(ObjectManager<?> manager) {
    Function<CachedObject, ObjectKey> key = object -> new ObjectKey(object.strategy(),
        object.state().map(state -> state.name().toLowerCase(Locale.ROOT)).orElse("unknown"));
    return manager.objects().stream().collect(Collectors.groupingBy(key, Collectors.counting()));
  }

  /**
   * Times the gets of one manager, one in {@link #sampling}: the choice costs a thread-local random number, a timed
   * get two clock reads and the observation. The data points are looked up once.
   */
  public final class Recorder {
    private final String resource;
    private final DistributionDataPoint duration;

    private Recorder(String resource) {
      this.resource = resource;
      this.duration = getDuration.labelValues(resource);
    }

    /** @return the start time of a get to time, or {@link #NOT_TIMED} */
    public long start() {
      return (ThreadLocalRandom.current().nextInt() & (sampling - 1)) == 0 ? System.nanoTime() : NOT_TIMED;
    }

    public void answered(long startNanos) {
      if (startNanos != NOT_TIMED) {
        duration.observe((System.nanoTime() - startNanos) / NANOS_PER_SECOND);
      }
    }

    public void failed(long startNanos, RuntimeException error) {
      answered(startNanos);
      errors(reason(error)).inc();
    }

    private CounterDataPoint errors(String reason) {
      return getErrors.labelValues(resource, reason);
    }

    private static String reason(RuntimeException error) {
      if (error instanceof NotRegisteredException) {
        return "not_registered";
      }
      if (error instanceof ObjectNotFoundException) {
        return "not_found";
      }
      if (error instanceof CacheSyncException) {
        return "sync_failed";
      }
      return "other";
    }
  }
}
