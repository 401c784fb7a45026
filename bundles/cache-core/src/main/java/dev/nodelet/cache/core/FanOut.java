package dev.nodelet.cache.core;

import dev.nodelet.cache.core.internal.watch.WatchHub;
import dev.nodelet.cache.core.internal.watch.WatchHubSettings;
import dev.nodelet.cache.core.internal.watch.WatchObjects;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchExpiredException;
import dev.nodelet.objectcache.WatchOptions;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The watch fan-out of a manager, on its own: a source feeds it the objects it observes ({@link #put}, {@link #remove},
 * {@link #progress}) and consumers open {@link Watch}es on it, with the API server's watch cache rules (revisions,
 * initial events, bookmarks, deadlines, closing a watcher that does not keep up).
 *
 * <p>A change is dispatched in the thread that feeds it; that thread waits at most {@link #DISPATCH_BUDGET} for full
 * watchers before the slowest are closed. Unless built with {@link Builder#manualTicks()}, the fan-out owns one timer
 * thread for bookmarks and deadlines; {@link #close()} stops it.
 *
 * @param <T> the Kubernetes type of the objects
 */
@ProviderType
public interface FanOut<T extends HasMetadata> extends AutoCloseable {

  /** The most a feeding thread waits for full watchers per change, as the API server's dispatcher does. */
  Duration DISPATCH_BUDGET = WatchHubSettings.DEFAULTS.maxDispatchBudget();

  /**
   * Records an object as the source observed it: ADDED if new, MODIFIED if changed, nothing if its resource version
   * is already cached or older. Ignored once closed.
   *
   * @param object the object as it is now; the fan-out keeps it, so the caller must not modify it afterwards
   */
  void put(T object);

  /**
   * Records that an object is gone (DELETED); unknown objects are ignored.
   *
   * @param namespace the object's namespace
   * @param name the object's name
   * @param resourceVersion the resource version of the deletion; {@code null} if unknown
   */
  void remove(String namespace, String name, String resourceVersion);

  /**
   * Records that the source has seen everything up to a resource version, so the next bookmarks can carry it.
   *
   * @param resourceVersion the resource version
   */
  void progress(String resourceVersion);

  /**
   * Opens a watch.
   *
   * @param options what to watch; see {@link WatchOptions}
   * @return the watch, already holding its first events
   * @throws IllegalArgumentException if the resource version is not a decimal number
   * @throws WatchExpiredException if the resource version is older than the history reaches
   * @throws IllegalStateException if the fan-out is closed
   */
  Watch<T> watch(WatchOptions<? super T> options);

  /**
   * Ends the watches whose deadline has come and sends due bookmarks, judged by the fan-out's clock. Its timer thread
   * calls this every second; with {@link Builder#manualTicks()} only the owner does.
   */
  void tick();

  /** @return how many watchers were closed because they did not keep up */
  long terminatedWatchers();

  /** @return how many initial events (current state or replayed history) watches were given */
  long initialEvents();

  /** @return how many watches are open */
  int watcherCount();

  /** @return the plural resource name the fan-out serves */
  String resource();

  /** Ends every watch and stops the timer thread, waiting for it. Idempotent. */
  @Override
  void close();

  /**
   * Starts building a fan-out.
   *
   * @param resource the plural resource name, e.g. {@code configmaps}, for messages and the timer thread's name
   * @param type the Java type of the objects (ConfigMap and Secret copy with their builders, others by
   *     serialization)
   * @param <T> the Kubernetes type of the objects
   * @return a builder with the API server's defaults
   */
  static <T extends HasMetadata> Builder<T> builder(String resource, Class<T> type) {
    return new Builder<>(resource, type);
  }

  /**
   * Options of a fan-out.
   *
   * @param <T> the Kubernetes type of the objects
   */
  final class Builder<T extends HasMetadata> {
    private final String resource;
    private final Class<T> type;
    private Clock clock = Clock.systemUTC();
    // each value checked when the settings are built
    private Duration tickPeriod = WatchHubSettings.DEFAULTS.tickPeriod();
    private int defaultBufferSize = WatchHubSettings.DEFAULTS.defaultBufferSize();
    private int historySize = WatchHubSettings.DEFAULTS.historySize();
    private Duration consumerLinger = WatchHubSettings.DEFAULTS.consumerLinger();

    private Builder(String resource, Class<T> type) {
      this.resource = Objects.requireNonNull(resource, "resource");
      this.type = Objects.requireNonNull(type, "type");
    }

    /**
     * @param clock the time of bookmarks, deadlines and the refill of the dispatch budget; the system UTC clock by
     *     default
     * @return this builder
     */
    public Builder<T> clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * No timer thread: bookmarks and deadlines are judged only when the owner calls {@link FanOut#tick()}.
     *
     * @return this builder
     */
    public Builder<T> manualTicks() {
      tickPeriod = Duration.ZERO;
      return this;
    }

    /**
     * @param size the input and result buffer size of a watch that does not ask for one (100 by default)
     * @return this builder; {@link #build()} refuses a size that is not positive
     */
    public Builder<T> defaultBufferSize(int size) {
      defaultBufferSize = size;
      return this;
    }

    /**
     * @param size how many past changes are kept for watches that start at a resource version (100 by default)
     * @return this builder; {@link #build()} refuses a negative size
     */
    public Builder<T> historySize(int size) {
      historySize = size;
      return this;
    }

    /**
     * @param linger how long a consumer in a stream of events waits for the next ones without being signalled (2 ms
     *     by default); zero to signal it at every wait
     * @return this builder; {@link #build()} refuses a negative linger
     */
    public Builder<T> consumerLinger(Duration linger) {
      consumerLinger = Objects.requireNonNull(linger, "linger");
      return this;
    }

    /**
     * @return a new fan-out; unless {@link #manualTicks()}, its timer thread runs until it is closed
     * @throws IllegalArgumentException naming the value given to this builder that is out of range
     */
    public FanOut<T> build() {
      WatchHubSettings d = WatchHubSettings.DEFAULTS;
      return new WatchHub<>(resource, WatchObjects.of(type), clock, new WatchHubSettings(d.bookmarkFrequency(),
          d.maxDispatchBudget(), d.budgetRefillPerSecond(), tickPeriod, defaultBufferSize, historySize,
          consumerLinger));
    }
  }
}
