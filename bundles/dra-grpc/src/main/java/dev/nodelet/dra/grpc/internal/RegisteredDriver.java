package dev.nodelet.dra.grpc.internal;

import dev.nodelet.dra.DraDriver;
import java.nio.file.Path;
import java.time.Duration;

/** A driver that passed the registration handshake; closed when its registration socket goes away. */
interface RegisteredDriver extends DraDriver, AutoCloseable {

  /** The socket that serves the driver's protocol. */
  Path endpoint();

  /** The protocol chosen from the driver's supported versions, e.g. {@code v1.DRAPlugin}. */
  String protocol();

  /**
   * How long every stream to the driver has failed before a snapshot; zero while it answers, and for drivers that
   * keep no stream (kubelet plugins are reached per call).
   */
  default Duration unreachableFor(long nowNanos) {
    return Duration.ZERO;
  }

  /** Releases the driver's connection; never throws. */
  @Override
  void close();
}
