package dev.nodelet.dra.internal;

import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.configuration.Running;
import dev.nodelet.configuration.ServicePublisher;
import dev.nodelet.dra.runtime.ControllerOptions;
import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.DraStatus;
import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.RegistrationFailures;
import dev.nodelet.dra.SelfPublishedSlices;
import dev.nodelet.dra.SliceSummary;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.watch.Reflectors;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
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
 * The DRA node controller as a DS component: every {@link DeviceSnapshots} service is monitored while it is
 * registered (dynamic, greedy, any number), and the slices of every {@link SelfPublishedSlices} driver are left
 * alone. Its configuration goes through {@link LastGoodConfiguration}: a valid new one
 * replaces the controller with one of the new options (the registered drivers move to it; the start-up grace period
 * keeps the published slices across the change), an invalid one is refused with an error naming the key and the
 * last good one stays. With an invalid first configuration it publishes nothing, registers no {@link DraStatus} and
 * holds readiness until a valid one comes. The component is the {@link DraStatus} service too, for the shell
 * commands, and its metrics' {@link MultiCollector}.
 */
// the status service is registered from code, once a valid configuration is in force: declared for resolvers
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=\"dev.nodelet.dra.DraStatus\"")
@Component(service = MultiCollector.class, configurationPid = DraComponent.PID,
    configurationPolicy = ConfigurationPolicy.OPTIONAL, immediate = true)
@Designate(ocd = DraConfiguration.class)
public final class DraComponent implements DraStatus, MultiCollector {

  public static final String PID = "dev.nodelet.dra";

  private final KubernetesClient client;
  private final Reflectors reflectors;
  private final NodeIdentity identity;
  private final LastGoodConfiguration<DraConfiguration, ControllerOptions> configuration;
  private final Running<NodeResourcesController> controller = new Running<>();
  // the driver services, for a controller built after a configuration change
  private final Running<NodeResourcesController>.Handed<DeviceSnapshots, DeviceSnapshots> drivers =
      controller.handing(driver -> driver, NodeResourcesController::addDriver, NodeResourcesController::removeDriver);
  private final Running<NodeResourcesController>.Handed<SelfPublishedSlices, SelfPublishedSlices> selfPublished =
      controller.handing(driver -> driver, NodeResourcesController::addSelfPublished,
          NodeResourcesController::removeSelfPublished);
  /** Shared by the controllers built one after another, so that the counts go on. */
  private final DraMetrics metrics = new DraMetrics(this);
  /** Where drivers register (the gRPC folder): their failed registrations are listed with the drivers. */
  private final List<RegistrationFailures> registrations = new CopyOnWriteArrayList<>();

  @Activate
  public DraComponent(BundleContext context,
      @Reference(name = "kubernetesClient", target = "(" + NodeIdentity.NODE_NAME_PROPERTY + "=*)")
      KubernetesClient client,
      @Reference(name = "reflectors") Reflectors reflectors,
      @Reference(name = "nodeIdentity") NodeIdentity identity,
      DraConfiguration config, Map<String, Object> properties) {
    this(ServicePublisher.of(context), client, reflectors, identity, config, properties);
  }

  /** For tests: where the status service and the health check of a waiting controller go. */
  DraComponent(ServicePublisher publisher, KubernetesClient client, Reflectors reflectors, NodeIdentity identity,
      DraConfiguration config, Map<String, Object> properties) {
    this.client = client;
    this.reflectors = reflectors;
    this.identity = identity;
    this.configuration = LastGoodConfiguration.waiting(PID, "the DRA node controller", DraOptions::from, publisher)
        .publishing(this, Map.of(), DraStatus.class)
        .publishing(new DraPublishingHealthCheck(this), DraPublishingHealthCheck.PROPERTIES, HealthCheck.class)
        .closing(controller);
    modified(config, properties);
  }

  /** Applies a valid configuration, refuses an invalid one; never throws for an invalid one. */
  @Modified
  void modified(DraConfiguration config, Map<String, Object> properties) {
    synchronized (controller) {
      configuration.apply(config, properties, next -> {
        // one controller at a time writes this node's slices: the old one stops before the new one starts
        controller.stop();
        NodeResourcesController replacement = build(next);
        replacement.start();
        drivers.handTo(replacement);
        selfPublished.handTo(replacement);
        controller.replace(replacement);
      });
    }
  }

  /** Withdraws the services, then closes what runs. */
  @Deactivate
  void deactivate() {
    configuration.close();
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

  @Reference(name = "driver", service = DeviceSnapshots.class, cardinality = ReferenceCardinality.MULTIPLE,
      policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
  void addDriver(DeviceSnapshots driver) {
    drivers.add(driver);
  }

  void removeDriver(DeviceSnapshots driver) {
    drivers.remove(driver);
  }

  @Reference(name = "selfPublished", service = SelfPublishedSlices.class,
      cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  void addSelfPublished(SelfPublishedSlices driver) {
    selfPublished.add(driver);
  }

  void removeSelfPublished(SelfPublishedSlices driver) {
    selfPublished.remove(driver);
  }

  @Reference(name = "registrationFailures", service = RegistrationFailures.class,
      cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  void addRegistrationFailures(RegistrationFailures source) {
    registrations.add(source);
  }

  void removeRegistrationFailures(RegistrationFailures source) {
    registrations.remove(source);
  }

  @Override
  public String nodeName() {
    return identity.nodeName();
  }

  // the metrics ask while the component waits for a valid configuration too: nothing then

  @Override
  public List<DriverStatus> drivers() {
    List<DriverStatus> known = controller.ask(NodeResourcesController::driverStatuses, List.of());
    if (registrations.isEmpty()) {
      return known;
    }
    // stable: a driver the controller knows comes before a failed registration of the same name
    return Stream.concat(known.stream(), registrations.stream().flatMap(r -> r.failedRegistrations().stream()))
        .sorted(Comparator.comparing(DriverStatus::driverName)).toList();
  }

  @Override
  public List<SliceSummary> slices() {
    return controller.ask(NodeResourcesController::slices, List.of());
  }

  @Override
  public Map<String, String> syncFailures() {
    return controller.ask(NodeResourcesController::syncFailures, Map.of());
  }

  @Override
  public MetricSnapshots collect() {
    return metrics.collect();
  }
}
