package dev.nodelet.node.internal;

import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.configuration.Running;
import dev.nodelet.configuration.ServicePublisher;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.node.RegisteredNode;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.osgi.annotation.bundle.Capability;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.Constants;
import org.osgi.framework.Version;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.Designate;

/**
 * Node mode as a DS component: with {@code enabled=true} this Nodelet registers its Node (the name of
 * {@link NodeIdentity}), renews its Lease and reports its status ({@link NodeAgent}); without, it writes nothing.
 * Its configuration goes through {@link LastGoodConfiguration}: a valid change replaces the agent (the new one adopts
 * the Node and goes on with the Lease), an invalid one is refused with the key named and the last good one stays;
 * with an invalid first one nothing is registered and readiness is held until a valid one comes. Its health check
 * {@code nodelet-node-lease} holds readiness while node mode is on and the Node is not registered or its Lease not
 * renewed. While node mode is on it is the {@link RegisteredNode} service.
 */
// the RegisteredNode service is registered from code, while node mode is on: declared for resolvers
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=\"dev.nodelet.node.RegisteredNode\"")
@Component(service = {}, immediate = true, configurationPid = NodeComponent.PID,
    configurationPolicy = ConfigurationPolicy.OPTIONAL)
@Designate(ocd = NodeConfiguration.class)
public final class NodeComponent implements RegisteredNode {

  public static final String PID = "dev.nodelet.node";

  /**
   * What the node reports about where it runs, besides the machine.
   *
   * @param runtimeVersion the OSGi framework, {@code osgi://<symbolic name>/<version>}
   * @param nodeletVersion Nodelet's version
   * @param storage the folder whose file system is measured when no path is configured
   */
  record Environment(String runtimeVersion, String nodeletVersion, Path storage) {
  }

  private final KubernetesClient client;
  private final NodeIdentity identity;
  private final Environment environment;
  private final LastGoodConfiguration<NodeConfiguration, NodeSettings> configuration;
  private final ServicePublisher publisher;
  private final Running<Started> running = new Running<>();
  private ServicePublisher.Registration registration; // guarded by running; while node mode is on

  /** An agent with the threads of its timer. */
  private record Started(NodeAgent agent, ExecutorTimer timer) implements AutoCloseable {
    @Override
    public void close() {
      agent.close();
      timer.close();
    }
  }

  @Activate
  public NodeComponent(BundleContext context,
      @Reference(name = "kubernetesClient", target = "(" + NodeIdentity.NODE_NAME_PROPERTY + "=*)")
      KubernetesClient client,
      @Reference(name = "nodeIdentity") NodeIdentity identity,
      NodeConfiguration config) {
    this(ServicePublisher.of(context), client, identity, environment(context), config);
  }

  /** For tests: where the health check goes, and what the node reports about where it runs. */
  NodeComponent(ServicePublisher publisher, KubernetesClient client, NodeIdentity identity, Environment environment,
      NodeConfiguration config) {
    this.publisher = publisher;
    this.client = client;
    this.identity = identity;
    this.environment = environment;
    this.configuration = LastGoodConfiguration.waiting(PID, "the node", NodeSettings::from, publisher)
        .publishing((HealthCheck) this::health, Map.of(HealthCheck.NAME, "nodelet-node-lease",
            HealthCheck.TAGS, new String[] {LastGoodConfiguration.READY_TAG, "nodelet-node"}), HealthCheck.class)
        .closing(running);
    modified(config);
  }

  /** Applies a valid configuration, refuses an invalid one; never throws for an invalid one. */
  @Modified
  void modified(NodeConfiguration config) {
    synchronized (running) {
      configuration.apply(config, Map.of(), next -> {
        // one agent at a time writes the Node and the Lease
        running.stop();
        if (next.enabled()) {
          running.replace(start(next));
          if (registration == null) {
            registration = publisher.register(List.of(RegisteredNode.class.getName()), this,
                Map.of(RegisteredNode.NODE_NAME_PROPERTY, identity.nodeName()));
          }
        } else {
          withdraw();
        }
      });
    }
  }

  private Started start(NodeSettings settings) {
    String name = identity.nodeName();
    NodeObjects.Identity node = new NodeObjects.Identity(name,
        settings.hostname().isEmpty() ? name : settings.hostname());
    ExecutorTimer timer = new ExecutorTimer();
    NodeAgent agent = NodeAgent.builder(client, node, settings, () -> HostFacts.detect(settings,
            environment.storage(), environment.runtimeVersion(), environment.nodeletVersion()))
        .timer(timer).nodeUid(identity::nodeUid).build();
    agent.start();
    return new Started(agent, timer);
  }

  private Result health() {
    Optional<Started> started = running.get();
    if (started.isEmpty()) {
      return new Result(Result.Status.OK, "node mode is off (" + PID + " enabled=false): no Node or Lease is written");
    }
    return started.get().agent().problem()
        .map(why -> new Result(Result.Status.TEMPORARILY_UNAVAILABLE, why))
        .orElseGet(() -> new Result(Result.Status.OK, "node " + identity.nodeName()
            + " registered, its Lease renewed"));
  }

  /** @return whether an agent runs (node mode on), for tests */
  boolean running() {
    return running.get().isPresent();
  }

  /** @return the agent running, null with node mode off; for tests */
  NodeAgent agent() {
    return running.ask(Started::agent, null);
  }

  private void withdraw() {
    if (registration != null) {
      registration.unregister();
      registration = null;
    }
  }

  @Override
  public String nodeName() {
    return identity.nodeName();
  }

  @Override
  public Optional<Node> node() {
    return running.ask(started -> started.agent().node(), Optional.empty());
  }

  @Deactivate
  void deactivate() {
    synchronized (running) {
      withdraw();
    }
    configuration.close();
  }

  private static Environment environment(BundleContext context) {
    Bundle framework = context.getBundle(Constants.SYSTEM_BUNDLE_ID);
    String storage = context.getProperty(Constants.FRAMEWORK_STORAGE);
    return new Environment("osgi://" + framework.getSymbolicName() + "/" + framework.getVersion(),
        version(context.getBundle().getVersion()),
        Path.of(storage != null ? storage : System.getProperty("java.io.tmpdir")));
  }

  /** 0.2.0.SNAPSHOT as Maven writes it: 0.2.0-SNAPSHOT. */
  static String version(Version version) {
    String base = version.getMajor() + "." + version.getMinor() + "." + version.getMicro();
    return version.getQualifier().isEmpty() ? base : base + "-" + version.getQualifier();
  }
}
