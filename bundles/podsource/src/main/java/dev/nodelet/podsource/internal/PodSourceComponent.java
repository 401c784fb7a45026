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

  private final LastGoodConfiguration<PodSourceConfiguration, Settings> configuration;
  private final PodSource source;

  @Activate
  public PodSourceComponent(@Reference Reflectors reflectors, @Reference NodeIdentity node,
      PodSourceConfiguration config) {
    this.configuration = LastGoodConfiguration.activate(PID, "the pod source", config,
        Settings::from);
    this.source = PodSource.builder(reflectors, node.nodeName()).listenerThreads(configuration.current().listenerThreads())
        .build();
    source.start();
  }

  /** Applies a valid configuration, refuses an invalid one; never throws. */
  @Modified
  void modified(PodSourceConfiguration config) {
    configuration.offer(config).ifPresent(next -> source.setListenerThreads(next.listenerThreads()));
  }

  /** The number of listener threads, for tests. */
  int threads() {
    return source.listenerThreads();
  }

  /** A validated configuration. */
  private record Settings(int listenerThreads) {

    /** @throws IllegalArgumentException naming the key that is wrong and why */
    static Settings from(PodSourceConfiguration config) {
      return new Settings((int) within("listener.threads", config::listener_threads, 1, PodSource.MAX_THREADS, ""));
    }

    @Override
    public String toString() {
      return "listener.threads=" + listenerThreads;
    }
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
