package dev.nodelet.dra.grpc.internal;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A driver that passed the registration handshake; closed when its registration socket goes away. It is registered
 * as one service under the role interfaces of {@code dev.nodelet.dra} that it has ({@link #roles()}).
 */
abstract class RegisteredDriver implements AutoCloseable {

  final String driverName;
  final Path endpoint;

  RegisteredDriver(String driverName, Path endpoint) {
    this.driverName = driverName;
    this.endpoint = endpoint;
  }

  public final String driverName() {
    return driverName;
  }

  /** The socket that serves the driver's protocol. */
  public final Path endpoint() {
    return endpoint;
  }

  /** The names of the role interfaces the driver's service is registered under. */
  public abstract List<String> roles();

  /** The protocol chosen from the driver's supported versions, e.g. {@code v1.DRAPlugin}. */
  public abstract String protocol();

  /**
   * How long every stream to the driver has failed before a snapshot; zero while it answers, and for drivers that
   * keep no stream (kubelet plugins are reached per call).
   */
  public Duration unreachableFor(long nowNanos) {
    return Duration.ZERO;
  }

  /** Releases the driver's connection; never throws. */
  @Override
  public abstract void close();
}
