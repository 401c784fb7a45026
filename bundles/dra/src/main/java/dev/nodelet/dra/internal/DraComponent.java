package dev.nodelet.dra.internal;

import dev.nodelet.dra.DraDriver;
import dev.nodelet.dra.DraStatus;
import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.SliceSummary;
import dev.nodelet.kube.NodeIdentity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;

/**
 * The DRA node controller as a DS component: every {@link DraDriver} service is monitored while it is registered
 * (dynamic, greedy, any number). A configuration change re-activates the component; the start-up grace period keeps
 * the published slices across that. The component is the {@link DraStatus} service too, for the shell commands.
 */
@Component(service = DraStatus.class, configurationPid = DraComponent.PID,
    configurationPolicy = ConfigurationPolicy.OPTIONAL, immediate = true)
@Designate(ocd = DraConfiguration.class)
public final class DraComponent implements DraStatus {

  public static final String PID = "dev.nodelet.dra";

  private final NodeResourcesController controller;

  @Activate
  public DraComponent(
      @Reference(name = "kubernetesClient", target = "(" + NodeIdentity.NODE_NAME_PROPERTY + "=*)")
      KubernetesClient client,
      @Reference(name = "nodeIdentity") NodeIdentity identity,
      DraConfiguration config) {
    controller = NodeResourcesController.builder(client, identity.nodeName())
        .nodeUid(identity::nodeUid)
        .options(ControllerOptions.from(config))
        .build();
    controller.start();
  }

  @Reference(name = "driver", service = DraDriver.class, cardinality = ReferenceCardinality.MULTIPLE,
      policy = ReferencePolicy.DYNAMIC, policyOption = ReferencePolicyOption.GREEDY)
  void addDriver(DraDriver driver) {
    controller.addDriver(driver);
  }

  void removeDriver(DraDriver driver) {
    controller.removeDriver(driver);
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

  @Deactivate
  void deactivate() {
    controller.close();
  }
}
