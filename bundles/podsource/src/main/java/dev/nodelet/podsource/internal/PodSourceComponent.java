package dev.nodelet.podsource.internal;

import static dev.nodelet.configuration.ConfigurationValues.within;

import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.objectcache.PodListener;
import dev.nodelet.podsource.PodSource;
import dev.nodelet.kube.watch.Reflectors;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.metatype.annotations.Designate;

/**
 * The pod source of this node: a whiteboard of {@link PodListener} services. New reflectors or node identity
 * re-activates it with a fresh watch, and every listener receives the current pods again. A new configuration is
 * applied in place; an invalid one is refused with the key named and the last good one stays. An invalid
 * configuration at activation fails the activation.
 */
@Component(service = {}, immediate = true, configurationPid = PodSourceComponent.PID)
@Designate(ocd = PodSourceConfiguration.class)
public final class PodSourceComponent {

  public static final String PID = "dev.nodelet.podsource";

  private final LastGoodConfiguration<PodSourceConfiguration, Integer> configuration;
  private final PodSource source;

  @Activate
  public PodSourceComponent(@Reference Reflectors reflectors, @Reference NodeIdentity node,
      PodSourceConfiguration config) {
    this.configuration = LastGoodConfiguration.activate(PID, "the pod source", config,
        PodSourceComponent::threads);
    this.source = PodSource.builder(reflectors, node.nodeName()).listenerThreads(configuration.current()).build();
    source.start();
  }

  /** Applies a valid configuration, refuses an invalid one; never throws. */
  @Modified
  void modified(PodSourceConfiguration config) {
    configuration.offer(config).ifPresent(source::setListenerThreads);
  }

  /** The number of listener threads, for tests. */
  int threads() {
    return source.listenerThreads();
  }

  /** @throws IllegalArgumentException naming the key that is wrong and why */
  private static Integer threads(PodSourceConfiguration config) {
    return (int) within("listener.threads", config::listener_threads, 1, PodSource.MAX_THREADS, "");
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
