package dev.nodelet.health.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** Configuration {@value HealthEndpoint#PID}: where the health endpoint listens. */
@ObjectClassDefinition(name = "Nodelet health endpoint",
    description = "An HTTP endpoint with /livez and /readyz (for a DaemonSet's probes), /system/health (every "
        + "health check as JSON) and /receipts (what each pod is served). Exists only while this configuration "
        + "does.")
public @interface HealthConfiguration {

  @AttributeDefinition(name = "Port", description = "TCP port to listen on (1..65535), or 0 for a free one, which "
      + "is logged", min = "0", max = "65535")
  int port() default 0;

  @AttributeDefinition(name = "Address", description = "Address to listen on: the loopback address unless set, "
      + "e.g. 0.0.0.0 for every interface (a kubelet's probe connects to the pod's IP)")
  String address() default "127.0.0.1";
}
