package dev.nodelet.node.api.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration {@value NodeApiComponent#PID}. */
@ObjectClassDefinition(name = "Nodelet node API",
    description = "The node's API as the kubelet serves it: HTTPS with /healthz and /containerLogs, which the API "
        + "server proxies for kubectl logs. Active only while node mode (dev.nodelet.node) is on.")
public @interface NodeApiConfiguration {

  @AttributeDefinition(name = "Port",
      description = "The HTTPS port; it must be the kubelet.port of dev.nodelet.node, which the Node reports as "
          + "daemonEndpoints.kubeletEndpoint.Port. 1 to 65535 (0, any free port, only suits tests: the Node "
          + "would not name it).", min = "0", max = "65535")
  int port() default 10250;

  @AttributeDefinition(name = "Address",
      description = "The address to listen on. Default 0.0.0.0: every interface, as the kubelet.")
  String address() default "0.0.0.0";

  @AttributeDefinition(name = "Serving certificate file",
      description = "PEM file of the serving certificate (then its chain). Empty: a self-signed certificate made at "
          + "start for localhost, this host's name and addresses.")
  String tls_cert_file() default "";

  @AttributeDefinition(name = "Serving key file",
      description = "PEM file of the serving certificate's private key in PKCS#8 (BEGIN PRIVATE KEY, EC or RSA). "
          + "Set with tls.cert.file.")
  String tls_key_file() default "";

  @AttributeDefinition(name = "Client CA file",
      description = "PEM file of the CAs whose client certificates authenticate a caller (the API server's "
          + "kubelet client certificate), as the kubelet's --client-ca-file. Empty: no client certificates.")
  String client_ca_file() default "";

  @AttributeDefinition(name = "Token file",
      description = "File of bearer tokens allowed to read logs, one 'token,user' a line (# comments). Empty: "
          + "none. The tokens are never logged.")
  String token_file() default "";

  @AttributeDefinition(name = "Authorized users",
      description = "User names (client certificate CN, or the user of a token) allowed to read logs. Empty: "
          + "every authenticated caller, as the kubelet's AlwaysAllow authorization.")
  String[] authorized_users() default {};

  @AttributeDefinition(name = "Log lines kept",
      description = "Log lines kept per container for /containerLogs (oldest dropped first). 1 to 100000.",
      min = "1", max = "100000")
  int log_lines() default 1000;
}
