package dev.nodelet.metrics.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** The configuration of PID {@code dev.nodelet.metrics}; {@code _} in a method name is {@code .} in the key. */
@ObjectClassDefinition(
    name = "Nodelet metrics endpoint",
    description = "Where Nodelet serves /metrics (Prometheus text format, OpenMetrics when the scraper asks for it)."
        + " Without this configuration no endpoint runs.")
public @interface MetricsConfiguration {

  @AttributeDefinition(
      name = "Port",
      description = "TCP port of the endpoint, 1 to 65535; 0 takes any free port (logged).",
      min = "0", max = "65535")
  int port() default MetricsSettings.DEFAULT_PORT;

  @AttributeDefinition(
      name = "Address",
      description = "IP address or host name to listen on. The loopback address by default, so that only this node"
          + " can scrape; 0.0.0.0 listens on every interface.")
  String address() default MetricsSettings.DEFAULT_ADDRESS;
}
