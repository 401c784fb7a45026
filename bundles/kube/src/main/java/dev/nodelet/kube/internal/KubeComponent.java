package dev.nodelet.kube.internal;

import dev.nodelet.configuration.LastGoodConfiguration;
import dev.nodelet.configuration.Running;
import dev.nodelet.configuration.ServicePublisher;
import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.internal.watch.Engine;
import dev.nodelet.kube.watch.Reflectors;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.apache.felix.hc.api.HealthCheck;
import org.osgi.annotation.bundle.Capability;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers the {@link KubernetesClient}, {@link Reflectors} and {@link NodeIdentity} services for configuration
 * {@value #PID}, and the readiness checks of the API server and of the node with them.
 *
 * <p>The services are registered programmatically rather than declared, so that an invalid configuration
 * registers nothing at all: the component waits, and a health check holds readiness naming the key
 * ({@link LastGoodConfiguration}). A valid configuration change replaces the client and its services, held in a
 * {@link Running} as every component holds what it runs with its settings; an invalid one is refused with an error
 * naming the key, and the client of the last good configuration stays registered, so nothing that depends on it
 * restarts.
 */
// the services are registered from code, so bnd cannot see them: declare them for resolvers such as Karaf's
@Capability(namespace = "osgi.service",
    attribute = "objectClass:List<String>=\"io.fabric8.kubernetes.client.KubernetesClient\"")
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=\"dev.nodelet.kube.NodeIdentity\"")
@Capability(namespace = "osgi.service",
    attribute = "objectClass:List<String>=\"dev.nodelet.kube.watch.Reflectors\"")
@Component(configurationPid = KubeComponent.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL,
    immediate = true)
@Designate(ocd = KubeConfiguration.class)
public final class KubeComponent {

  public static final String PID = "dev.nodelet.kube";

  private static final Logger LOG = LoggerFactory.getLogger(KubeComponent.class);

  /** Registers a client, its reflectors and its node identity as services; returns what unregisters them. */
  interface Publisher {
    Runnable publish(KubernetesClient client, Reflectors reflectors, NodeIdentity identity, String nodeName);
  }

  private final Publisher publisher;
  private final UnaryOperator<String> environment;
  private final Supplier<String> hostName;
  private final KubeClientFactory factory;
  private final KubeMetrics metrics;
  private final LastGoodConfiguration<KubeConfiguration, KubeSettings> configuration;
  /** The client of the configuration in force with its services; closed with the component. */
  private final Running<Connection> connection = new Running<>();

  @Activate
  public KubeComponent(BundleContext context, @Reference KubeMetrics metrics, KubeConfiguration config,
      Map<String, Object> properties) {
    this(ServicePublisher.of(context), System::getenv, KubeComponent::hostName, metrics, config, properties);
  }

  /**
   * For tests and plain Java: where the services and the health check of a waiting client go, and the environment
   * the node name may come from.
   */
  KubeComponent(ServicePublisher services, UnaryOperator<String> environment, Supplier<String> hostName,
      KubeConfiguration config) {
    this(services, environment, hostName, new KubeMetrics(), config, Map.of());
  }

  KubeComponent(ServicePublisher services, UnaryOperator<String> environment, Supplier<String> hostName,
      KubeMetrics metrics, KubeConfiguration config) {
    this(services, environment, hostName, metrics, config, Map.of());
  }

  /** @param properties the component's properties, whose keys are checked against the configuration's */
  KubeComponent(ServicePublisher services, UnaryOperator<String> environment, Supplier<String> hostName,
      KubeMetrics metrics, KubeConfiguration config, Map<String, Object> properties) {
    this.factory = new KubeClientFactory(metrics);
    this.metrics = metrics;
    this.publisher = publisher(services);
    this.environment = environment;
    this.hostName = hostName;
    // with no valid configuration the component stays active and registers nothing until a valid one comes
    this.configuration = LastGoodConfiguration.waiting(PID, "the Kubernetes client", this::validate, services)
        .closing(connection);
    modified(config, properties);
  }

  /**
   * A valid configuration replaces the client (every valid one does: the kubeconfig file it names may have
   * changed); an invalid one is refused and the client in service stays (or, if there is none, none is
   * registered). Never throws for an invalid one.
   */
  @Modified
  void modified(KubeConfiguration config, Map<String, Object> properties) {
    synchronized (connection) {
      configuration.apply(config, properties, settings -> {
        KubernetesClient client = factory.create(settings);
        // the old client's services go before the new ones come: consumers never see two clients at once
        connection.stop();
        try {
          connection.replace(connect(settings, client));
        } catch (RuntimeException e) {
          client.close(); // not in service: nobody else closes it
          throw e;
        }
      });
    }
  }

  /** Withdraws the services of a waiting component, then closes the client and its services. */
  @Deactivate
  void deactivate() {
    configuration.close();
  }

  /** The settings of the registered client, if any; for tests. */
  Optional<KubeSettings> settings() {
    return connection.get().map(Connection::settings);
  }

  /** The warnings given for keys its configuration does not have; for tests. */
  List<String> unknownKeys() {
    return configuration.unknownKeys();
  }

  /**
   * Checks the settings and the kubeconfig they name, without network I/O and without opening anything.
   *
   * @throws InvalidSettingException naming the key that is wrong
   */
  private KubeSettings validate(KubeConfiguration config) {
    KubeSettings settings = KubeSettings.from(config, environment, hostName);
    factory.clientConfig(settings);
    return settings;
  }

  private Connection connect(KubeSettings settings, KubernetesClient client) {
    Engine reflectors = new Engine(client, settings.watch(), metrics::watchRestarted);
    NodeIdentityReflector identity = new NodeIdentityReflector(reflectors, settings.nodeName());
    Runnable unpublish = publisher.publish(client, reflectors, identity, settings.nodeName());
    identity.start();
    LOG.info("Kubernetes client registered: {}", settings);
    return new Connection(settings, client, reflectors, identity, unpublish);
  }

  /**
   * The client, its reflectors and its node identity as services, with the node name as a property, and the
   * readiness checks of the API server and of the node.
   */
  private static Publisher publisher(ServicePublisher services) {
    return (client, reflectors, identity, nodeName) -> {
      Map<String, Object> properties = Map.of(NodeIdentity.NODE_NAME_PROPERTY, nodeName);
      // the identity last: whoever waits for it finds the client's other services there
      List<ServicePublisher.Registration> registrations = List.of(
          services.register(List.of(KubernetesClient.class.getName()), client, properties),
          services.register(List.of(Reflectors.class.getName()), reflectors, properties),
          services.register(List.of(HealthCheck.class.getName()), new ApiServerHealthCheck(client),
              ApiServerHealthCheck.PROPERTIES),
          services.register(List.of(HealthCheck.class.getName()), new NodeIdentityHealthCheck(identity),
              NodeIdentityHealthCheck.PROPERTIES),
          services.register(List.of(NodeIdentity.class.getName()), identity, properties));
      return () -> {
        // the last registered goes first: no consumer is left with an identity whose client went
        for (int i = registrations.size() - 1; i >= 0; i--) {
          registrations.get(i).unregister();
        }
      };
    };
  }

  private static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return null;
    }
  }

  /** What one good configuration owns; closed in reverse order of creation so consumers never see a closed client. */
  private record Connection(KubeSettings settings, KubernetesClient client, Engine reflectors,
      NodeIdentityReflector identity, Runnable unpublish) implements AutoCloseable {

    @Override
    public void close() {
      unpublish.run();
      identity.close();
      reflectors.close(); // every watch of every consumer ends before the client closes
      client.close();
      LOG.info("Kubernetes client for node {} closed", identity.nodeName());
    }
  }
}
