package dev.nodelet.dra.claims.internal;

import static dev.nodelet.configuration.ConfigurationValues.path;
import static dev.nodelet.configuration.ConfigurationValues.within;

import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.configuration.Running;
import dev.nodelet.configuration.ServicePublisher;
import dev.nodelet.dra.ClaimPreparation;
import dev.nodelet.dra.DeviceHealthSource;
import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimManager;
import dev.nodelet.dra.claims.ClaimStatus;
import dev.nodelet.dra.claims.ContainerDevices;
import dev.nodelet.dra.claims.DeviceHealthInfo;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.objectcache.PodListener;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.felix.hc.api.HealthCheck;
import org.osgi.annotation.bundle.Capability;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;

/**
 * The claim manager as a DS component: a {@link PodListener} of the pod source, fed with every
 * {@link ClaimPreparation} and every {@link DeviceHealthSource} service (dynamic, greedy), and the
 * {@link ClaimStatus} service. A valid new configuration replaces the claim
 * manager in place: the checkpoint carries the prepared claims across, and the new manager is given the pods and
 * drivers the component holds; an invalid one is refused naming the key and the last good one stays. With an invalid
 * first configuration it registers neither {@link PodListener} nor {@link ClaimStatus} and holds readiness until a
 * valid one comes (its configuration goes through {@link LastGoodConfiguration}).
 */
// the listener and status services are registered from code, once a valid configuration is in force: declared for
// resolvers
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=\"dev.nodelet.objectcache.PodListener\"")
@Capability(namespace = "osgi.service",
    attribute = "objectClass:List<String>=\"dev.nodelet.dra.claims.ClaimStatus\"")
@Component(service = MultiCollector.class, configurationPid = ClaimsComponent.PID,
    configurationPolicy = ConfigurationPolicy.OPTIONAL, immediate = true)
@Designate(ocd = ClaimsConfiguration.class)
public final class ClaimsComponent implements PodListener, ClaimStatus, MultiCollector {

  public static final String PID = "dev.nodelet.dra.claims";

  /** The longest period or delay: a day. */
  static final long MAX_MILLIS = 24L * 60 * 60 * 1000;

  /** A validated configuration. */
  record Settings(Path stateDirectory, Duration sweepPeriod, Duration retryInitial, Duration retryMax,
      Duration healthRetry, Map<String, Boolean> featureGates) {

    /** @throws IllegalArgumentException naming the key that is wrong and why */
    static Settings from(ClaimsConfiguration config) {
      Path path = path("state.directory", config.state_directory());
      long initial = within("retry.initial.millis", config::retry_initial_millis, 1, MAX_MILLIS, "milliseconds");
      long max = within("retry.max.millis", config::retry_max_millis, 1, MAX_MILLIS, "milliseconds");
      if (max < initial) {
        throw new IllegalArgumentException("retry.max.millis: must be at least retry.initial.millis (" + initial
            + "), was " + max);
      }
      return new Settings(path,
          Duration.ofSeconds(within("sweep.period.seconds", config::sweep_period_seconds, 1, MAX_MILLIS / 1000,
              "seconds")),
          Duration.ofMillis(initial), Duration.ofMillis(max),
          Duration.ofMillis(within("health.retry.millis", config::health_retry_millis, 1, MAX_MILLIS,
              "milliseconds")),
          FeatureGates.parse("feature.gates", config.feature_gates()));
    }

    @Override
    public String toString() {
      return "state.directory=" + stateDirectory + ", sweep.period.seconds=" + sweepPeriod.getSeconds()
          + ", retry.initial.millis=" + retryInitial.toMillis() + ", retry.max.millis=" + retryMax.toMillis()
          + ", health.retry.millis=" + healthRetry.toMillis()
          + ", feature.gates=" + FeatureGates.defaults().with(featureGates);
    }
  }

  private final KubernetesClient client;
  private final String nodeName;
  private final LastGoodConfiguration<ClaimsConfiguration, Settings> configuration;
  private final ClaimsMetrics metrics = new ClaimsMetrics(this);
  private final Running<ClaimManager> manager = new Running<>();
  // what the driver services and the pod source gave, for a manager built after a configuration change
  private final Running<ClaimManager>.Handed<ClaimPreparation, ClaimPreparation> drivers =
      manager.handing(driver -> driver, ClaimManager::addDriver, ClaimManager::removeDriver);
  private final Running<ClaimManager>.Handed<DeviceHealthSource, DeviceHealthSource> healthSources =
      manager.handing(source -> source, ClaimManager::addHealthSource, ClaimManager::removeHealthSource);
  private final Running<ClaimManager>.Handed<String, Pod> pods =
      manager.handing(ClaimsComponent::key, ClaimManager::podUpdated, ClaimManager::podRemoved);

  @Activate
  public ClaimsComponent(BundleContext context,
      @Reference(name = "kubernetesClient", target = "(" + NodeIdentity.NODE_NAME_PROPERTY + "=*)")
      KubernetesClient client,
      @Reference(name = "nodeIdentity") NodeIdentity identity,
      ClaimsConfiguration config, Map<String, Object> properties) {
    this(ServicePublisher.of(context), client, identity, config, properties);
  }

  /** For tests: where the listener and status services and the health check of a waiting manager go. */
  ClaimsComponent(ServicePublisher publisher, KubernetesClient client, NodeIdentity identity,
      ClaimsConfiguration config, Map<String, Object> properties) {
    this.client = client;
    this.nodeName = identity.nodeName();
    this.configuration = LastGoodConfiguration.waiting(PID, "the DRA claim manager", Settings::from, publisher)
        .publishing(this, Map.of(), PodListener.class, ClaimStatus.class)
        .publishing(new ClaimsHealthCheck(this), ClaimsHealthCheck.PROPERTIES, HealthCheck.class).closing(manager);
    modified(config, properties);
  }

  /** Applies a valid configuration, refuses an invalid one; never throws for an invalid one. */
  @Modified
  void modified(ClaimsConfiguration config, Map<String, Object> properties) {
    synchronized (manager) {
      configuration.apply(config, properties, next -> {
        // one manager at a time owns the checkpoint: the old one stops before the new one loads it
        manager.stop();
        ClaimManager started = start(next);
        drivers.handTo(started);
        healthSources.handTo(started);
        pods.handTo(started);
        manager.replace(started);
      });
    }
  }

  /** Withdraws the services, then closes what runs. */
  @Deactivate
  void deactivate() {
    configuration.close();
  }

  private ClaimManager start(Settings settings) {
    ClaimManager started = ClaimManager.builder(client, nodeName)
        .stateDirectory(settings.stateDirectory())
        .sweepPeriod(settings.sweepPeriod())
        .retry(settings.retryInitial(), settings.retryMax())
        .healthRetry(settings.healthRetry())
        .featureGates(settings.featureGates())
        .build();
    started.start();
    return started;
  }

  /** The configuration in force, for tests. */
  Settings settings() {
    return configuration.current();
  }

  @Reference(name = "driver", service = ClaimPreparation.class, cardinality = ReferenceCardinality.MULTIPLE,
      policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
  void addDriver(ClaimPreparation driver) {
    drivers.add(driver);
  }

  void removeDriver(ClaimPreparation driver) {
    drivers.remove(driver);
  }

  @Reference(name = "healthSource", service = DeviceHealthSource.class, cardinality = ReferenceCardinality.MULTIPLE,
      policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
  void addHealthSource(DeviceHealthSource source) {
    healthSources.add(source);
  }

  void removeHealthSource(DeviceHealthSource source) {
    healthSources.remove(source);
  }

  @Override
  public void registerPod(Pod pod) {
    pods.add(pod);
  }

  @Override
  public void unregisterPod(Pod pod) {
    pods.remove(pod);
  }

  private static String key(Pod pod) {
    return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
  }

  // the metrics ask while the component waits for a valid configuration too: nothing then

  @Override
  public List<ClaimInfo> claims() {
    return manager.ask(ClaimManager::claims, List.of());
  }

  @Override
  public List<ContainerDevices> containers() {
    return manager.ask(ClaimManager::containers, List.of());
  }

  @Override
  public List<DeviceHealthInfo> health() {
    return manager.ask(ClaimManager::health, List.of());
  }

  @Override
  public Optional<String> checkpointProblem() {
    return manager.ask(ClaimManager::checkpointProblem, Optional.empty());
  }

  @Override
  public MetricSnapshots collect() {
    return metrics.collect();
  }
}
