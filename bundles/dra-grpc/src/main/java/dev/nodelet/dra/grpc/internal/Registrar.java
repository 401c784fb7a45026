package dev.nodelet.dra.grpc.internal;

import dev.nodelet.controller.Scheduler;
import dev.nodelet.dra.grpc.pluginregistration.InfoRequest;
import dev.nodelet.dra.grpc.pluginregistration.PluginInfo;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationGrpc;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationStatus;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The kubelet's registration handshake with one registration socket: {@code GetInfo}, validation, then
 * {@code NotifyRegistrationStatus} with the verdict. A plugin of type {@code DRAPlugin} that supports the kubelet's
 * DRA API ({@code v1.DRAPlugin}, else {@code v1beta1.DRAPlugin}) becomes a {@link KubeletPlugin}; one that supports
 * only Nodelet's snapshot stream ({@code nodelet.dra.v1}) becomes a {@link GrpcDraDriver}.
 */
final class Registrar {

  static final String PLUGIN_TYPE = "DRAPlugin";
  static final String PROTOCOL_VERSION = "nodelet.dra.v1";
  /** What Nodelet speaks, newest first. */
  static final List<String> KNOWN_VERSIONS = List.of(KubeletPlugin.V1, KubeletPlugin.V1BETA1, PROTOCOL_VERSION);
  /** The longest unix socket path (sun_path is 108 bytes with the terminating NUL). */
  private static final int MAX_SOCKET_PATH = 107;

  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final int MAX_DRIVER_NAME = 63;

  /** The driver refused registration: its info is invalid. Asking again gives the same answer. */
  static final class RefusedException extends Exception {
    private static final long serialVersionUID = 1L;
    private final String driverName;

    RefusedException(String driverName, String message) {
      super(message);
      this.driverName = driverName;
    }

    /** The name the driver gave, possibly empty or invalid. */
    String driverName() {
      return driverName;
    }
  }

  /**
   * The transport cannot dial at all (Netty's epoll transport is not available here, or the transport is closed);
   * the message says why. Asking again gives the same answer.
   */
  static final class TransportException extends Exception {
    private static final long serialVersionUID = 1L;

    TransportException(IllegalStateException cause) {
      super(cause.getMessage(), cause);
    }
  }

  private final Transport transport;
  private final Duration timeout;
  private final Duration callTimeout;
  private final Duration healthInitial;
  private final Duration healthCap;
  private final Scheduler healthTime;

  /** @param callTimeout the deadline of each prepare and unprepare call of a kubelet plugin */
  Registrar(Transport transport, Duration timeout, Duration callTimeout) {
    this(transport, timeout, callTimeout, KubeletPlugin.HEALTH_RETRY_INITIAL, KubeletPlugin.HEALTH_RETRY_CAP, null);
  }

  /**
   * @param healthInitial the first delay before a plugin that answered "Unimplemented" is asked for health again
   * @param healthCap the longest such delay
   * @param healthTime the time of that delay; {@code null} for the transport's event loop
   */
  Registrar(Transport transport, Duration timeout, Duration callTimeout, Duration healthInitial, Duration healthCap,
      Scheduler healthTime) {
    this.transport = transport;
    this.timeout = timeout;
    this.callTimeout = callTimeout;
    this.healthInitial = healthInitial;
    this.healthCap = healthCap;
    this.healthTime = healthTime;
  }

  /**
   * Registers the driver behind a registration socket.
   *
   * @return the driver, not yet published
   * @throws RefusedException the driver's info is invalid; the driver has been told why
   * @throws TransportException the transport cannot dial; the driver has not been asked
   * @throws io.grpc.StatusRuntimeException the socket did not answer (a stale socket, a driver still starting)
   */
  RegisteredDriver register(Path registrationSocket) throws RefusedException, TransportException {
    ManagedChannel channel;
    try {
      channel = transport.channel(registrationSocket);
    } catch (IllegalStateException e) {
      throw new TransportException(e);
    }
    try {
      RegistrationGrpc.RegistrationBlockingStub stub = RegistrationGrpc.newBlockingStub(channel);
      PluginInfo info = stub.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
          .getInfo(InfoRequest.getDefaultInstance());
      String problem = problem(registrationSocket, info);
      stub.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS).notifyRegistrationStatus(
          RegistrationStatus.newBuilder().setPluginRegistered(problem == null).setError(problem == null ? "" : problem)
              .build());
      if (problem != null) {
        throw new RefusedException(info.getName(), problem);
      }
      Path endpoint = endpoint(registrationSocket, info);
      String version = version(info);
      if (PROTOCOL_VERSION.equals(version)) {
        return new GrpcDraDriver(info.getName(), endpoint, transport);
      }
      return new KubeletPlugin(info.getName(), endpoint, version, healthVersion(info), transport, callTimeout,
          KubeletPlugin.healthBackoff(healthInitial, healthCap), healthTime);
    } finally {
      channel.shutdownNow();
    }
  }

  /** What is wrong with the info, or {@code null}; the message names the socket and the driver. */
  private static String problem(Path registrationSocket, PluginInfo info) {
    String who = "plugin \"" + info.getName() + "\" at " + registrationSocket;
    if (!PLUGIN_TYPE.equals(info.getType())) {
      return who + " has type \"" + info.getType() + "\"; Nodelet registers only " + PLUGIN_TYPE;
    }
    if (info.getName().length() > MAX_DRIVER_NAME || !DNS_SUBDOMAIN.matcher(info.getName()).matches()) {
      return who + ": the name must be a DNS subdomain of at most " + MAX_DRIVER_NAME + " characters";
    }
    if (version(info) == null) {
      return who + " supports " + info.getSupportedVersionsList() + " but Nodelet speaks one of " + KNOWN_VERSIONS
          + "; use a driver release that serves the kubelet's DRA API v1 or v1beta1";
    }
    try {
      Path endpoint = endpoint(registrationSocket, info);
      if (!endpoint.isAbsolute()) {
        return who + ": the endpoint must be the absolute path of a unix socket, was \"" + info.getEndpoint()
            + "\"";
      }
      if (endpoint.toString().getBytes(StandardCharsets.UTF_8).length > MAX_SOCKET_PATH
          || !endpoint.normalize().equals(endpoint)) {
        return who + ": the endpoint \"" + info.getEndpoint() + "\" must be a normalized path of at most "
            + MAX_SOCKET_PATH + " bytes";
      }
      return prefixed(who, SocketFiles.socketProblem("endpoint", endpoint, SocketFiles.mode(endpoint)));
    } catch (InvalidPathException | IOException e) {
      return who + ": cannot use endpoint \"" + info.getEndpoint() + "\": " + e.getMessage();
    }
  }

  /**
   * The protocol to speak: the kubelet's DRA API, newest first, else Nodelet's snapshot stream; {@code null} when
   * the plugin supports none of them.
   */
  static String version(PluginInfo info) {
    return KNOWN_VERSIONS.stream().filter(info.getSupportedVersionsList()::contains).findFirst().orElse(null);
  }

  /**
   * The health service to watch, as the kubelet chooses it: {@code v1.DRAResourceHealth}, else
   * {@code v1alpha1.DRAResourceHealth}, else {@code null} (the plugin is never asked for health).
   */
  static String healthVersion(PluginInfo info) {
    List<String> versions = info.getSupportedVersionsList();
    return versions.contains(KubeletPlugin.HEALTH_V1) ? KubeletPlugin.HEALTH_V1
        : versions.contains(KubeletPlugin.HEALTH_V1ALPHA1) ? KubeletPlugin.HEALTH_V1ALPHA1 : null;
  }

  /** The DRA socket; a kubelet plugin that names none serves DRA on its registration socket. */
  private static Path endpoint(Path registrationSocket, PluginInfo info) {
    return info.getEndpoint().isEmpty() ? registrationSocket : Path.of(info.getEndpoint());
  }

  private static String prefixed(String who, String problem) {
    return problem == null ? null : who + ": " + problem;
  }
}
