package dev.nodelet.dra.internal;

import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.dra.runtime.ControllerOptions;
import dev.nodelet.dra.DraDriver;
import dev.nodelet.dra.DraStatus;
import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.SliceSummary;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.watch.Reflectors;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * The DRA node controller as a DS component: every {@link DraDriver} service is monitored while it is registered
 * (dynamic, greedy, any number). A new configuration does not re-activate the component: a valid one replaces the
 * controller with one of the new options (the registered drivers move to it; the start-up grace period keeps the
 * published slices across the change), an invalid one is refused with an error naming the key and the last good one
 * stays. An invalid configuration at activation fails the activation. The component is the {@link DraStatus}
 * service too, for the shell commands, and its metrics' {@link MultiCollector}.
 */
@Component(service = {DraStatus.class, MultiCollector.class}, configurationPid = DraComponent.PID,
    configurationPolicy = ConfigurationPolicy.OPTIONAL, immediate = true)
@Designate(ocd = DraConfiguration.class)
public final class DraComponent implements DraStatus, MultiCollector {

  public static final String PID = "dev.nodelet.dra";

  private final KubernetesClient client;
  private final Reflectors reflectors;
  private final NodeIdentity identity;
  private final Object lock = new Object();
  private final Set<DraDriver> drivers = Collections.newSetFromMap(new IdentityHashMap<>()); // guarded by lock
  private final LastGoodConfiguration<DraConfiguration, ControllerOptions> configuration;
  private volatile NodeResourcesController controller; // written under lock
  /** Shared by the controllers built one after another, so that the counts go on. */
  private final DraMetrics metrics = new DraMetrics(this);

  /**
   * @throws IllegalArgumentException if the configuration is invalid, naming the key
   */
  @Activate
  public DraComponent(
      @Reference(name = "kubernetesClient", target = "(" + NodeIdentity.NODE_NAME_PROPERTY + "=*)")
      KubernetesClient client,
      @Reference(name = "reflectors") Reflectors reflectors,
      @Reference(name = "nodeIdentity") NodeIdentity identity,
      DraConfiguration config) {
    this.client = client;
    this.reflectors = reflectors;
    this.identity = identity;
    this.configuration = LastGoodConfiguration.activate(PID, "the DRA node controller", config, DraOptions::from);
    NodeResourcesController first = build(configuration.current());
    first.start();
    this.controller = first;
  }

  /** Applies a valid configuration, refuses an invalid one; never throws. */
  @Modified
  void modified(DraConfiguration config) {
    synchronized (lock) {
      configuration.offer(config).ifPresent(next -> {
        // one controller at a time writes this node's slices: the old one stops before the new one starts
        controller.close();
        NodeResourcesController replacement = build(next);
        replacement.start();
        drivers.forEach(replacement::addDriver);
        controller = replacement;
      });
    }
  }

  private NodeResourcesController build(ControllerOptions with) {
    return NodeResourcesController.builder(client, identity.nodeName())
        .reflectors(reflectors)
        .nodeUid(identity::nodeUid)
        .options(with)
        .metrics(metrics)
        .build();
  }

  /** The options in force, for tests. */
  ControllerOptions options() {
    return configuration.current();
  }

  @Reference(name = "driver", service = DraDriver.class, cardinality = ReferenceCardinality.MULTIPLE,
      policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
  void addDriver(DraDriver driver) {
    synchronized (lock) {
      drivers.add(driver);
      controller.addDriver(driver);
    }
  }

  void removeDriver(DraDriver driver) {
    synchronized (lock) {
      drivers.remove(driver);
      controller.removeDriver(driver);
    }
  }

  @Override
  public String nodeName() {
    return controller.nodeName();
  }

  @Override
  public List<DriverStatus> drivers() {
    return controller.driverStatuses();
  }

  @Override
  public List<SliceSummary> slices() {
    return controller.slices();
  }

  @Override
  public Map<String, String> syncFailures() {
    return controller.syncFailures();
  }

  @Override
  public MetricSnapshots collect() {
    return metrics.collect();
  }

  @Deactivate
  void deactivate() {
    synchronized (lock) {
      controller.close();
      drivers.clear();
    }
  }
}
