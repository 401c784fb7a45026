package dev.nodelet.dra.claims.internal;

import dev.nodelet.dra.DraDriver;
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
import java.util.Optional;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The claim manager as a DS component: a {@link PodListener} of the pod source, fed with every {@link DraDriver}
 * service (dynamic, greedy), and the {@link ClaimStatus} service. A new configuration re-activates it; the
 * checkpoint carries the prepared claims across.
 */
@Component(service = {PodListener.class, ClaimStatus.class, MultiCollector.class},
    configurationPid = ClaimsComponent.PID,
    configurationPolicy = ConfigurationPolicy.OPTIONAL, immediate = true)
@Designate(ocd = ClaimsConfiguration.class)
public final class ClaimsComponent implements PodListener, ClaimStatus, MultiCollector {

  public static final String PID = "dev.nodelet.dra.claims";

  private static final Logger LOG = LoggerFactory.getLogger(ClaimsComponent.class);

  private final ClaimManager manager;
  private final ClaimsMetrics metrics = new ClaimsMetrics(this);

  /**
   * @throws IllegalArgumentException if the configuration is invalid, naming the key
   */
  @Activate
  public ClaimsComponent(
      @Reference(name = "kubernetesClient", target = "(" + NodeIdentity.NODE_NAME_PROPERTY + "=*)")
      KubernetesClient client,
      @Reference(name = "nodeIdentity") NodeIdentity identity,
      ClaimsConfiguration config) {
    try {
      manager = ClaimManager.builder(client, identity.nodeName())
          .stateDirectory(Path.of(config.state_directory()))
          .sweepPeriod(Duration.ofSeconds(config.sweep_period_seconds()))
          .retry(Duration.ofMillis(config.retry_initial_millis()), Duration.ofMillis(config.retry_max_millis()))
          .healthRetry(Duration.ofMillis(config.health_retry_millis()))
          .build();
    } catch (RuntimeException e) {
      LOG.error("Configuration {} is invalid, DRA claims are not prepared: {}", PID, e.getMessage());
      throw new IllegalArgumentException(PID + ": " + e.getMessage(), e);
    }
    manager.start();
  }

  @Reference(name = "driver", service = DraDriver.class, cardinality = ReferenceCardinality.MULTIPLE,
      policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
  void addDriver(DraDriver driver) {
    manager.addDriver(driver);
  }

  void removeDriver(DraDriver driver) {
    manager.removeDriver(driver);
  }

  @Override
  public void registerPod(Pod pod) {
    manager.podUpdated(pod);
  }

  @Override
  public void unregisterPod(Pod pod) {
    manager.podRemoved(pod);
  }

  @Override
  public List<ClaimInfo> claims() {
    return manager.claims();
  }

  @Override
  public List<ContainerDevices> containers() {
    return manager.containers();
  }

  @Override
  public List<DeviceHealthInfo> health() {
    return manager.health();
  }

  @Override
  public Optional<String> checkpointProblem() {
    return manager.checkpointProblem();
  }

  @Override
  public MetricSnapshots collect() {
    return metrics.collect();
  }

  @Deactivate
  void deactivate() {
    manager.close();
  }
}
