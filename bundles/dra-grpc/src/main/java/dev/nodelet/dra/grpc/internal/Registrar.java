package dev.nodelet.dra.grpc.internal;

import dev.nodelet.dra.grpc.pluginregistration.InfoRequest;
import dev.nodelet.dra.grpc.pluginregistration.PluginInfo;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationGrpc;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationStatus;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The kubelet's registration handshake with one registration socket: {@code GetInfo}, validation, then
 * {@code NotifyRegistrationStatus} with the verdict.
 */
final class Registrar {

  static final String PLUGIN_TYPE = "DRAPlugin";
  static final String PROTOCOL_VERSION = "nodelet.dra.v1";

  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final int MAX_DRIVER_NAME = 63;

  /** The driver refused registration: its info is invalid. Asking again gives the same answer. */
  static final class RefusedException extends Exception {
    private static final long serialVersionUID = 1L;

    RefusedException(String message) {
      super(message);
    }
  }

  private final Transport transport;
  private final Duration timeout;

  Registrar(Transport transport, Duration timeout) {
    this.transport = transport;
    this.timeout = timeout;
  }

  /**
   * Registers the driver behind a registration socket.
   *
   * @return the driver, not yet published
   * @throws RefusedException the driver's info is invalid; the driver has been told why
   * @throws io.grpc.StatusRuntimeException the socket did not answer (a stale socket, a driver still starting)
   */
  GrpcDraDriver register(Path registrationSocket) throws RefusedException {
    ManagedChannel channel = transport.channel(registrationSocket);
    try {
      RegistrationGrpc.RegistrationBlockingStub stub = RegistrationGrpc.newBlockingStub(channel);
      PluginInfo info = stub.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
          .getInfo(InfoRequest.getDefaultInstance());
      String problem = problem(registrationSocket, info);
      stub.withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS).notifyRegistrationStatus(
          RegistrationStatus.newBuilder().setPluginRegistered(problem == null).setError(problem == null ? "" : problem)
              .build());
      if (problem != null) {
        throw new RefusedException(problem);
      }
      return new GrpcDraDriver(info.getName(), Path.of(info.getEndpoint()), transport);
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
    if (!info.getSupportedVersionsList().contains(PROTOCOL_VERSION)) {
      return who + " supports " + info.getSupportedVersionsList() + " but Nodelet speaks " + PROTOCOL_VERSION;
    }
    try {
      Path endpoint = Path.of(info.getEndpoint());
      if (!endpoint.isAbsolute()) {
        return who + ": the endpoint must be the absolute path of a unix socket, was \"" + info.getEndpoint()
            + "\"";
      }
      return prefixed(who, SocketFiles.socketProblem("endpoint", endpoint, SocketFiles.mode(endpoint)));
    } catch (InvalidPathException | IOException e) {
      return who + ": cannot use endpoint \"" + info.getEndpoint() + "\": " + e.getMessage();
    }
  }

  private static String prefixed(String who, String problem) {
    return problem == null ? null : who + ": " + problem;
  }
}
