package dev.nodelet.dra.grpc.internal;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/** The configuration of PID {@code dev.nodelet.dra.grpc}; {@code _} in a method name is {@code .} in the key. */
@ObjectClassDefinition(
    name = "Nodelet external DRA drivers (gRPC)",
    description = "Registers DRA drivers that are separate processes: each places a registration socket in the"
        + " registration folder and streams its devices over gRPC on unix sockets.")
public @interface GrpcDraConfiguration {

  @AttributeDefinition(name = "Registration folder",
      description = "Where drivers place their registration sockets. It must be a directory of mode 0700 and the"
          + " sockets must have mode 0600; anything looser is refused.")
  String registration_folder() default "/var/lib/nodelet/plugins_registry";

  @AttributeDefinition(name = "Poll interval (ms)", min = "10",
      description = "How often the registration folder is checked for new, replaced and removed sockets.")
  long poll_interval_millis() default 500;

  @AttributeDefinition(name = "Handshake timeout (ms)", min = "1",
      description = "How long a registration socket may take to answer GetInfo and NotifyRegistrationStatus.")
  long handshake_timeout_millis() default 5000;

  @AttributeDefinition(name = "Call timeout (ms)", min = "0",
      description = "The deadline of each NodePrepareResources and NodeUnprepareResources call of a driver written"
          + " for the kubelet. 0: the kubelet's default, 45 s.")
  long call_timeout_millis() default 45000;

  @AttributeDefinition(name = "Withdraw unreachable drivers after (s)", min = "0",
      description = "A registered driver whose endpoint has not been reachable for this long (every attempt of the"
          + " monitor's backoff failed before a snapshot) is withdrawn: its ResourceSlices are deleted after the"
          + " controller's grace period, and it registers again when its registration socket is created again."
          + " 0: never.")
  long unreachable_withdraw_seconds() default 30;

  @AttributeDefinition(name = "I/O threads", min = "1",
      description = "Event loop threads shared by all driver connections.")
  int io_threads() default 1;
}
