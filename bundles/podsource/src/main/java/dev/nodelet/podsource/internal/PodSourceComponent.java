package dev.nodelet.podsource.internal;

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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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

  private static final Logger LOG = LoggerFactory.getLogger(PodSourceComponent.class);

  private final PodSource source;

  @Activate
  public PodSourceComponent(@Reference Reflectors reflectors, @Reference NodeIdentity node,
      PodSourceConfiguration config) {
    int threads;
    try {
      threads = threads(config);
    } catch (IllegalArgumentException e) {
      LOG.error("Configuration {} is invalid, the pod source does not start: {}", PID, e.getMessage());
      throw e;
    }
    this.source = PodSource.builder(reflectors, node.nodeName()).listenerThreads(threads).build();
    source.start();
  }

  /** Applies a valid configuration, refuses an invalid one; never throws. */
  @Modified
  void modified(PodSourceConfiguration config) {
    int threads;
    try {
      threads = threads(config);
    } catch (IllegalArgumentException e) {
      LOG.error("Configuration {} refused, the pod source keeps its last good configuration (listener.threads={}): "
          + "{}", PID, source.listenerThreads(), e.getMessage());
      return;
    }
    if (threads != source.listenerThreads()) {
      source.setListenerThreads(threads);
      LOG.info("Pod source reconfigured: listener.threads={}", threads);
    }
  }

  /** The number of listener threads, for tests. */
  int threads() {
    return source.listenerThreads();
  }

  private static int threads(PodSourceConfiguration config) {
    int threads;
    try {
      threads = config.listener_threads();
    } catch (RuntimeException e) {
      // DS and the converter fail on the first read of a value they cannot convert
      throw new IllegalArgumentException("listener.threads: not a whole number (" + e.getMessage() + ")");
    }
    PodSource.checkListenerThreads(threads);
    return threads;
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
