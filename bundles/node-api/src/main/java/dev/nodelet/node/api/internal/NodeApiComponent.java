package dev.nodelet.node.api.internal;

import dev.nodelet.node.RegisteredNode;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.osgi.framework.BundleContext;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;
import org.osgi.service.log.LogReaderService;
import org.osgi.service.metatype.annotations.Designate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's API, as the kubelet's server on its port: active while this Nodelet is a registered node (the
 * {@link RegisteredNode} service), serving the log records of the pod containers' bundles to the API server.
 */
@Component(configurationPid = NodeApiComponent.PID, configurationPolicy = ConfigurationPolicy.OPTIONAL,
    service = {}, immediate = true)
@Designate(ocd = NodeApiConfiguration.class)
public final class NodeApiComponent {

  public static final String PID = "dev.nodelet.node.api";

  private static final Logger LOG = LoggerFactory.getLogger(NodeApiComponent.class);

  private final ContainerLogs logs;
  private final NodeApiServer server;
  private final Certificates.Identity identity;

  /**
   * @throws IllegalArgumentException naming the key of a configuration that cannot be used
   */
  @Activate
  public NodeApiComponent(BundleContext context, @Reference RegisteredNode node, NodeApiConfiguration config) {
    InetAddress address;
    try {
      address = InetAddress.getByName(config.address().isBlank() ? "0.0.0.0" : config.address().strip());
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("address of " + PID + " is not an address: " + config.address(), e);
    }
    if (config.port() < 0 || config.port() > 65535) {
      throw new IllegalArgumentException("port of " + PID + " must be 1 to 65535, not " + config.port());
    }
    this.identity = identity(config, node.nodeName());
    List<X509Certificate> clientCas = config.client_ca_file().isBlank() ? List.of()
        : Certificates.certificates(Path.of(config.client_ca_file().strip()));
    Map<String, String> tokens = config.token_file().isBlank() ? Map.of()
        : Callers.readTokens(Path.of(config.token_file().strip()));
    Callers callers = new Callers(tokens, Set.of(config.authorized_users()));
    this.logs = new ContainerLogs(context, Math.max(1, config.log_lines()));
    try {
      this.server = NodeApiServer.start(new InetSocketAddress(address, config.port()), identity, clientCas, callers,
          logs, Clock.systemUTC());
    } catch (RuntimeException e) {
      logs.close();
      throw e;
    }
    if (clientCas.isEmpty() && tokens.isEmpty()) {
      LOG.warn("The node's API of {} accepts no caller: set client.ca.file (the API server's client CA) or "
          + "token.file in {} for kubectl logs to reach it", node.nodeName(), PID);
    }
    LOG.info("The node's API of {} serves https://{}:{}/containerLogs ({} client CA certificates, {} tokens, "
        + "serving certificate {})", node.nodeName(), address.getHostAddress(), server.port(), clientCas.size(),
        tokens.size(), config.tls_cert_file().isBlank() ? "self-signed" : config.tls_cert_file());
  }

  /**
   * A log reader comes: its records are read from now on, after the little history it has. The reference is optional,
   * so that a framework whose log service declares no capability (Karaf's pax-logging) resolves the bundle; greedy,
   * so that a log service that comes later is read too; and dynamic, so that a log service that goes (pax-logging
   * withdraws its reader while the framework stops) does not re-create the component and bind its port again.
   *
   * @param reader a log reader (in the launcher both Felix's log service and pax-logging have one)
   */
  @Reference(name = "logReader", cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY, unbind = "removeReader")
  void addReader(LogReaderService reader) {
    logs.addReader(reader);
  }

  /** @param reader a log reader that goes: its records are no longer read */
  void removeReader(LogReaderService reader) {
    logs.removeReader(reader);
  }

  private static Certificates.Identity identity(NodeApiConfiguration config, String nodeName) {
    boolean cert = !config.tls_cert_file().isBlank();
    boolean key = !config.tls_key_file().isBlank();
    if (cert != key) {
      throw new IllegalArgumentException("tls.cert.file and tls.key.file of " + PID + " go together: set both, or "
          + "neither for a self-signed certificate");
    }
    if (cert) {
      return Certificates.read(Path.of(config.tls_cert_file().strip()), Path.of(config.tls_key_file().strip()));
    }
    Set<String> names = new LinkedHashSet<>(List.of("localhost", nodeName));
    List<InetAddress> addresses = new ArrayList<>();
    try {
      names.add(InetAddress.getLocalHost().getHostName());
    } catch (UnknownHostException e) {
      // no host name to add
    }
    try {
      for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        addresses.addAll(Collections.list(nic.getInetAddresses()).stream()
            .filter(a -> !a.isLinkLocalAddress()).toList());
      }
    } catch (SocketException e) {
      addresses.add(InetAddress.getLoopbackAddress());
    }
    return Certificates.selfSigned(nodeName, names, addresses);
  }

  /** @return the port the node's API listens on */
  int port() {
    return server.port();
  }

  /** @return how many containers have their log kept */
  int containers() {
    return logs.containers();
  }

  /** @return the serving certificate, which a test trusts */
  X509Certificate servingCertificate() {
    return identity.chain().get(0);
  }

  @Deactivate
  void deactivate() {
    logs.close(); // ends the followers first, so that the server's threads are free to end
    server.close();
  }
}
