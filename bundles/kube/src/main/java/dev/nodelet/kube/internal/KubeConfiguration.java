package dev.nodelet.kube.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** The configuration of PID {@code dev.nodelet.kube}; {@code _} in a method name is {@code .} in the key. */
@ObjectClassDefinition(
    name = "Nodelet Kubernetes client",
    description = "How Nodelet reaches the Kubernetes API server and which node it serves. An explicit master URL"
        + " wins, then a kubeconfig file, then the automatic configuration (KUBECONFIG, ~/.kube/config, or the"
        + " in-cluster service account).")
public @interface KubeConfiguration {

  @AttributeDefinition(
      name = "Master URL",
      description = "Absolute http or https URL of the API server. Without a kubeconfig path the client sends no"
          + " credentials (e.g. to kubectl proxy); with one, it replaces the server of the kubeconfig context.",
      required = false)
  String master_url() default "";

  @AttributeDefinition(
      name = "Kubeconfig path",
      description = "A readable kubeconfig file. Empty: KUBECONFIG, ~/.kube/config or the in-cluster service"
          + " account.",
      required = false)
  String kubeconfig_path() default "";

  @AttributeDefinition(
      name = "Context",
      description = "The kubeconfig context to use; empty for the current context. Must exist in the kubeconfig.",
      required = false)
  String context() default "";

  @AttributeDefinition(
      name = "Node name",
      description = "The name of this node's Node object. Empty: the environment variable NODE_NAME, else the host"
          + " name in lower case.",
      required = false)
  String node_name() default "";

  @AttributeDefinition(
      name = "Request timeout (ms)",
      description = "Timeout of one API request in milliseconds; must be positive. Does not apply to watches.",
      min = "1")
  int request_timeout() default KubeSettings.DEFAULT_TIMEOUT_MILLIS;

  @AttributeDefinition(
      name = "Connection timeout (ms)",
      description = "Timeout for opening a connection to the API server in milliseconds; must be positive.",
      min = "1")
  int connection_timeout() default KubeSettings.DEFAULT_TIMEOUT_MILLIS;

  @AttributeDefinition(
      name = "Watch restart rate (per second)",
      description = "How many watches of this node may be re-established per second after a failure or an API"
          + " server restart, across all of them (a token bucket with jitter); must be positive.")
  double watch_restart_rate() default dev.nodelet.kube.internal.watch.EngineSettings.DEFAULT_RESTART_RATE;

  @AttributeDefinition(
      name = "Watch restart burst",
      description = "How many watches may be re-established at once before the rate applies; at least 1.",
      min = "1")
  int watch_restart_burst() default dev.nodelet.kube.internal.watch.EngineSettings.DEFAULT_RESTART_BURST;

  @AttributeDefinition(
      name = "HTTP/2",
      description = "Speak HTTP/2 over a pool of connections (Jetty's HTTP/2 client: TLS with ALPN, a new connection"
          + " at the API server's stream limit, 4 I/O threads; HTTP/1.1 over plain http). Off: HTTP/1.1 over the JDK"
          + " client, one connection per open watch. Jetty's logging is private to Nodelet: no logging configuration"
          + " makes it print request headers or bodies.")
  boolean http2_enabled() default true;
}
