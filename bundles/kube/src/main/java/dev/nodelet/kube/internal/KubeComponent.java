package dev.nodelet.kube.internal;

import dev.nodelet.kube.NodeIdentity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.Optional;
import org.osgi.annotation.bundle.Capability;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers the {@link KubernetesClient} and {@link NodeIdentity} services for configuration {@value #PID}.
 *
 * <p>The services are registered programmatically rather than declared, so that an invalid configuration
 * registers nothing at all. Every configuration change re-activates the component with a new client.
 */
// the services are registered from code, so bnd cannot see them: declare them for resolvers such as Karaf's
@Capability(namespace = "osgi.service",
    attribute = "objectClass:List<String>=\"io.fabric8.kubernetes.client.KubernetesClient\"")
@Capability(namespace = "osgi.service", attribute = "objectClass:List<String>=\"dev.nodelet.kube.NodeIdentity\"")
@Component(configurationPid = KubeComponent.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL,
    immediate = true)
@Designate(ocd = KubeConfiguration.class)
public final class KubeComponent {

  public static final String PID = "dev.nodelet.kube";

  private static final Logger LOG = LoggerFactory.getLogger(KubeComponent.class);

  private final Optional<Connection> connection;

  @Activate
  public KubeComponent(BundleContext context, KubeConfiguration config) {
    this.connection = connect(context, config);
  }

  @Deactivate
  void deactivate() {
    connection.ifPresent(Connection::close);
  }

  private static Optional<Connection> connect(BundleContext context, KubeConfiguration config) {
    KubeSettings settings;
    KubernetesClient client;
    try {
      settings = KubeSettings.from(config, System::getenv, KubeComponent::hostName);
      client = new KubeClientFactory().create(settings);
    } catch (InvalidSettingException e) {
      LOG.error("Configuration {} is invalid, no KubernetesClient is registered: {}", PID, e.getMessage());
      return Optional.empty();
    }
    NodeIdentityInformer identity = new NodeIdentityInformer(client, settings.nodeName());
    Dictionary<String, Object> properties = new Hashtable<>();
    properties.put(NodeIdentity.NODE_NAME_PROPERTY, settings.nodeName());
    ServiceRegistration<KubernetesClient> clientRegistration =
        context.registerService(KubernetesClient.class, client, properties);
    ServiceRegistration<NodeIdentity> identityRegistration =
        context.registerService(NodeIdentity.class, identity, properties);
    identity.start();
    LOG.info("Kubernetes client registered: {}", settings);
    return Optional.of(new Connection(client, identity, clientRegistration, identityRegistration));
  }

  private static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return null;
    }
  }

  /** What one activation owns; closed in reverse order of creation so consumers never see a closed client. */
  private record Connection(KubernetesClient client, NodeIdentityInformer identity,
      ServiceRegistration<KubernetesClient> clientRegistration,
      ServiceRegistration<NodeIdentity> identityRegistration) {

    void close() {
      identityRegistration.unregister();
      clientRegistration.unregister();
      identity.close();
      client.close();
      LOG.info("Kubernetes client for node {} closed", identity.nodeName());
    }
  }
}
