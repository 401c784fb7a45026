package dev.nodelet.podsource.internal;

import static dev.nodelet.configuration.ConfigurationValues.within;

import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.configuration.ServicePublisher;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.objectcache.PodListener;
import dev.nodelet.podsource.PodSource;
import dev.nodelet.kube.watch.Reflectors;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.felix.hc.api.HealthCheck;
import org.osgi.framework.BundleContext;
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
 * re-activates it with a fresh watch, and every listener receives the current pods again. Its configuration goes
 * through {@link LastGoodConfiguration}: a valid new one is applied in place, an invalid one is refused with the key
 * named and the last good one stays; with an invalid first one it watches nothing and holds readiness until a valid
 * one comes. Once running, its health check {@code nodelet-pods-listed} holds readiness until the node's pods have
 * been listed and handed to every listener.
 */
@Component(service = {}, immediate = true, configurationPid = PodSourceComponent.PID)
@Designate(ocd = PodSourceConfiguration.class)
public final class PodSourceComponent {

  public static final String PID = "dev.nodelet.podsource";

  private final Reflectors reflectors;
  private final String nodeName;
  private final LastGoodConfiguration<PodSourceConfiguration, Settings> configuration;
  private final Set<PodListener> listeners = Collections.newSetFromMap(new IdentityHashMap<>()); // guarded by this
  private PodSource source; // guarded by this; null until a valid configuration came

  @Activate
  public PodSourceComponent(BundleContext context, @Reference Reflectors reflectors, @Reference NodeIdentity node,
      PodSourceConfiguration config, Map<String, Object> properties) {
    this(ServicePublisher.of(context), reflectors, node, config, properties);
  }

  /** For tests: where the health check of a waiting pod source goes. */
  PodSourceComponent(ServicePublisher publisher, Reflectors reflectors, NodeIdentity node,
      PodSourceConfiguration config) {
    this(publisher, reflectors, node, config, Map.of());
  }

  private PodSourceComponent(ServicePublisher publisher, Reflectors reflectors, NodeIdentity node,
      PodSourceConfiguration config, Map<String, Object> properties) {
    this.reflectors = reflectors;
    this.nodeName = node.nodeName();
    this.configuration = LastGoodConfiguration.waiting(PID, "the pod source", Settings::from, publisher)
        .publishing(new PodsListedHealthCheck(nodeName, this::source), PodsListedHealthCheck.PROPERTIES,
            HealthCheck.class);
    modified(config, properties);
  }

  /** Applies a valid configuration, refuses an invalid one; never throws for an invalid one. */
  @Modified
  synchronized void modified(PodSourceConfiguration config, Map<String, Object> properties) {
    configuration.apply(config, properties, next -> {
      if (source != null) {
        source.setListenerThreads(next.listenerThreads());
        return;
      }
      source = PodSource.builder(reflectors, nodeName).listenerThreads(next.listenerThreads()).build();
      source.start();
      listeners.forEach(source::addListener);
    });
  }

  private synchronized PodSource source() {
    return source;
  }

  /** The number of listener threads, 0 while it waits for a valid configuration; for tests. */
  synchronized int threads() {
    return source == null ? 0 : source.listenerThreads();
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
  synchronized void addListener(PodListener listener) {
    listeners.add(listener);
    if (source != null) {
      source.addListener(listener);
    }
  }

  synchronized void removeListener(PodListener listener) {
    listeners.remove(listener);
    if (source != null) {
      source.removeListener(listener);
    }
  }

  @Deactivate
  synchronized void deactivate() {
    configuration.close();
    if (source != null) {
      source.close();
    }
    listeners.clear();
  }
}
