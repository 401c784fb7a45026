package dev.nodelet.store.watch.internal;

import static dev.nodelet.configuration.ConfigurationValues.within;

import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.configuration.Running;
import dev.nodelet.configuration.ServicePublisher;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.watch.Reflectors;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.objectcache.StoreStrategy;
import dev.nodelet.persistence.Persistence;
import dev.nodelet.persistence.PersistenceConfig;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.osgi.annotation.bundle.Capability;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code watch} strategy as a service. Its configuration goes through {@link LastGoodConfiguration}: a valid new
 * one builds a new strategy for the stores created from then on (the managers take fresh stores when the service's
 * properties change; the strategy before is retired through {@link Running#retiring}, and stops its watches and
 * sweep timer with its last store), an invalid one is
 * refused with an error naming the key. A change of {@code max.watches} alone applies to the strategy in force, so
 * that the stores keep their objects and the budget holds across the change. Each object's watch is a reflector of
 * {@code nodelet-kube}'s {@link Reflectors} service, over its client: the watches share its connections and restart
 * bucket, and its requests are counted in {@code rest_client_*}. The time-to-live of polled objects follows the
 * node's annotation through {@link NodeIdentity}, which watches the node anyway. A new client re-activates it;
 * deactivation stops every watch and the sweep timer. With an invalid first configuration it registers no strategy
 * (the managers serve with their built-in {@code get}) and holds readiness until a valid one comes.
 */
// the strategy service is registered from code, once a valid configuration is in force: declared for resolvers
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=\"dev.nodelet.objectcache.StoreStrategy\"")
@Component(service = MultiCollector.class, immediate = true, configurationPid = WatchStrategyComponent.PID)
@Designate(ocd = WatchStrategyConfiguration.class)
public final class WatchStrategyComponent implements StoreStrategy, MultiCollector {

  public static final String PID = "dev.nodelet.store.watch";

  static final String RESYNC_INTERVAL = "resync.interval.seconds";
  static final String SYNC_WAIT = "sync.wait.millis";
  static final String MAX_WATCHES = "max.watches";
  static final String POLLED_TTL = "polled.ttl.seconds";
  /** A year, as the {@code ttl} strategy's longest time-to-live. */
  static final long MAX_POLLED_TTL_SECONDS = 365L * 24 * 60 * 60;
  /** A day: the idle time is five of these, and far longer overflows the clock arithmetic. */
  static final long MAX_RESYNC_INTERVAL_SECONDS = 24 * 60 * 60;
  /** Ten minutes: a get blocks this long at most while an object's first list is awaited. */
  static final long MAX_SYNC_WAIT_MILLIS = 10 * 60 * 1000;

  private static final Logger LOG = LoggerFactory.getLogger(WatchStrategyComponent.class);

  /**
   * A validated configuration.
   *
   * @param resyncIntervalSeconds {@code resync.interval.seconds}
   * @param syncWaitMillis {@code sync.wait.millis}
   * @param persistence the {@code persistence.*} keys, if {@code persistence.dir} is set
   * @param maxWatches {@code max.watches}; 0 for no budget
   * @param polledTtlSeconds {@code polled.ttl.seconds}
   */
  record Settings(long resyncIntervalSeconds, long syncWaitMillis, Optional<PersistenceConfig> persistence,
      int maxWatches, long polledTtlSeconds) {

    Settings(long resyncIntervalSeconds, long syncWaitMillis, Optional<PersistenceConfig> persistence) {
      this(resyncIntervalSeconds, syncWaitMillis, persistence, 0, WatchSettings.DEFAULT_POLLED_TTL.toSeconds());
    }

    /** @throws IllegalArgumentException naming the key that is wrong and why */
    static Settings from(WatchStrategyConfiguration config) {
      return new Settings(
          within(RESYNC_INTERVAL, config::resync_interval_seconds, 1, MAX_RESYNC_INTERVAL_SECONDS, "seconds"),
          within(SYNC_WAIT, config::sync_wait_millis, 1, MAX_SYNC_WAIT_MILLIS, "milliseconds"),
          PersistenceConfig.from(config.persistence_dir(), config.persistence_key_file(),
              config.persistence_encrypt_configmaps(), config::persistence_max_bytes,
              config::persistence_restored_grace_seconds),
          (int) within(MAX_WATCHES, config::max_watches, 0, WatchBudget.MAX, "watches"),
          within(POLLED_TTL, config::polled_ttl_seconds, 0, MAX_POLLED_TTL_SECONDS, "seconds"));
    }

    /** @return whether {@code other} differs from these in the watch budget at most */
    boolean sameButBudget(Settings other) {
      return equals(new Settings(other.resyncIntervalSeconds, other.syncWaitMillis, other.persistence, maxWatches,
          other.polledTtlSeconds));
    }

    @Override
    public String toString() {
      return RESYNC_INTERVAL + "=" + resyncIntervalSeconds + ", " + SYNC_WAIT + "=" + syncWaitMillis
          + (maxWatches == 0 ? "" : ", " + MAX_WATCHES + "=" + maxWatches + ", " + POLLED_TTL + "=" + polledTtlSeconds)
          + persistence.map(p -> ", " + p).orElse("");
    }
  }

  private final KubernetesClient client;
  private final NodeIdentity node;
  private final Reflectors reflectors;
  private final String nodeName;
  private final LastGoodConfiguration<WatchStrategyConfiguration, Settings> configuration;
  /** Shared by the strategies built one after another, so that the counts go on. */
  private final WatchMetrics metrics = new WatchMetrics();
  /**
   * A strategy replaced keeps serving the stores it created until their managers have taken fresh ones from its
   * successor (the service's new properties tell them to), then closes: closing it at once would stop the watches
   * that those stores still answer gets from.
   */
  private final Running<WatchStrategyRuntime> strategy = Running.retiring(WatchStrategyRuntime::closeWhenUnused);
  /** The open persistence directory of {@link #strategy}, if any; changed with it. */
  private final Running<Persistence> persistence = new Running<>();

  @Activate
  public WatchStrategyComponent(BundleContext context,
      @Reference(name = "kubernetesClient") KubernetesClient client,
      @Reference(name = "reflectors") Reflectors reflectors, @Reference(name = "nodeIdentity") NodeIdentity node,
      WatchStrategyConfiguration config, Map<String, Object> properties) {
    this(ServicePublisher.of(context), client, reflectors, node, config, properties);
  }

  /** For tests: where the strategy service and the health check of a waiting strategy go. */
  WatchStrategyComponent(ServicePublisher publisher, KubernetesClient client, Reflectors reflectors,
      NodeIdentity node, WatchStrategyConfiguration config, Map<String, Object> properties) {
    this.client = client;
    this.node = node;
    this.reflectors = reflectors;
    this.nodeName = node.nodeName();
    this.configuration = LastGoodConfiguration.waiting(PID, "the watch store strategy", Settings::from, publisher)
        .publishing(this, Map.of(StoreStrategy.PROPERTY, "watch"), StoreStrategy.class)
        .closing(strategy, persistence);
    modified(config, properties);
  }

  /** Applies a valid configuration, refuses an invalid one; never throws for an invalid one. */
  @Modified
  synchronized void modified(WatchStrategyConfiguration config, Map<String, Object> properties) {
    Optional<Settings> previous = configuration.settings();
    configuration.apply(config, properties, next -> {
      if (previous.isEmpty()) {
        strategy.replace(build(next, false));
        LOG.info("Watch store strategy active: {}", next);
        return;
      }
      if (next.sameButBudget(previous.get())) {
        // the stores stay: their watches beyond the new budget end, or polled objects move back to watches
        strategy.get().orElseThrow().maxWatches(next.maxWatches());
        LOG.info("Watch budget changed: {}", next.maxWatches() == 0 ? "none" : next.maxWatches() + " watches");
        return;
      }
      if (next.persistence().equals(previous.get().persistence())) {
        // the same directory stays open, shared by the old stores and the new ones
        strategy.replace(build(next, true));
        return;
      }
      // the files of a persistence directory are open in one place at a time: the old stores end first
      LOG.info("Persistence settings changed: the watch strategy's stores restart");
      strategy.stop();
      persistence.stop();
      strategy.replace(build(next, false));
    });
  }

  /** Withdraws the services, then closes what runs. */
  @Deactivate
  void deactivate() {
    configuration.close();
  }

  /** A strategy with the settings; its persistence directory is the one open if {@code keep}, else opened anew. */
  private WatchStrategyRuntime build(Settings s, boolean keep) {
    WatchStrategyOptions options = new WatchStrategyOptions(client).reflectors(reflectors)
        .resyncInterval(Duration.ofSeconds(s.resyncIntervalSeconds()))
        .syncWait(Duration.ofMillis(s.syncWaitMillis()))
        .maxWatches(s.maxWatches())
        .polledTtl(Duration.ofSeconds(s.polledTtlSeconds()))
        .nodeAnnotations(node::nodeAnnotation)
        .metrics(metrics);
    if (!keep) {
      persistence.replace(s.persistence().map(p -> Persistence.open(p.options(nodeName))).orElse(null));
    }
    s.persistence().ifPresent(p -> options.persistence(persistence.get().orElseThrow())
        .restoredReferenceGrace(p.restoredGrace()));
    return new WatchStrategyRuntime(options);
  }

  /** The configuration in force. */
  Settings settings() {
    return configuration.current();
  }

  /** The strategy new stores come from. */
  WatchStrategyRuntime strategy() {
    return strategy.get().orElse(null);
  }

  @Override
  public <T extends HasMetadata> ObjectStore<T> createStore(ResourceType<T> type,
      ObjectStore.Listener<? super T> listener) {
    while (true) {
      WatchStrategyRuntime current = strategy.get().orElseThrow(() -> new IllegalStateException(strategy.closed()
          ? "the watch strategy is closed" : "the watch store strategy waits for a valid configuration " + PID));
      try {
        return current.createStore(type, listener);
      } catch (IllegalStateException e) {
        if (current == strategy()) {
          throw e;
        }
        // replaced and closed meanwhile: take the new one
      }
    }
  }

  @Override
  public MetricSnapshots collect() {
    return metrics.collect();
  }
}
