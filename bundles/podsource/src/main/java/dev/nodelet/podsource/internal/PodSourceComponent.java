package dev.nodelet.podsource.internal;

import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.objectcache.PodListener;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;

/**
 * The pod source of this node: a whiteboard of {@link PodListener} services. A new client, node identity or
 * configuration re-activates it with a fresh watch, and every listener receives the current pods again.
 */
@Component(service = {}, immediate = true, configurationPid = PodSourceComponent.PID)
@Designate(ocd = PodSourceConfiguration.class)
public final class PodSourceComponent {

  public static final String PID = "dev.nodelet.podsource";

  private final PodSource source;

  @Activate
  public PodSourceComponent(@Reference KubernetesClient client, @Reference NodeIdentity node,
      PodSourceConfiguration config) {
    this.source = new PodSource(client, node.nodeName(), config.listener_threads());
    source.start();
  }

  @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  void addListener(PodListener listener) {
    source.addListener(listener);
  }

  void removeListener(PodListener listener) {
    source.removeListener(listener);
  }

  @Deactivate
  void deactivate() {
    source.close();
  }
}
