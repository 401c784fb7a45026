package dev.nodelet.examples.externaldriver;

import dev.nodelet.dra.grpc.pluginregistration.InfoRequest;
import dev.nodelet.dra.grpc.pluginregistration.PluginInfo;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationGrpc;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationStatus;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationStatusResponse;
import dev.nodelet.dra.grpc.v1.DRAPluginGrpc;
import dev.nodelet.dra.grpc.v1.Device;
import dev.nodelet.dra.grpc.v1.DeviceAttribute;
import dev.nodelet.dra.grpc.v1.ListAndWatchResourcesRequest;
import dev.nodelet.dra.grpc.v1.ListAndWatchResourcesResponse;
import dev.nodelet.dra.grpc.v1.Pool;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.TimeUnit;

/**
 * An external DRA driver for Nodelet, as small as it gets. It serves two gRPC services on two unix sockets:
 * <ul>
 *   <li>{@code pluginregistration.Registration} on {@code <registry>/<name>-reg.sock}: Nodelet finds this socket in
 *       its registration folder, asks {@code GetInfo} and reports the outcome with
 *       {@code NotifyRegistrationStatus};</li>
 *   <li>{@code nodelet.dra.v1.DRAPlugin} on the endpoint named in the info: {@code ListAndWatchResources} sends a
 *       full snapshot at once and again after every change.</li>
 * </ul>
 * Each line typed on standard input that is a number sets the device count and sends a new snapshot.
 *
 * <p>Usage: {@link Options#USAGE}; {@code --help} prints it.
 */
public final class ExternalDriver {

  private final String name;
  private final Path registrationSocket;
  private final Path endpoint;
  private final Set<StreamObserver<ListAndWatchResourcesResponse>> watchers = new CopyOnWriteArraySet<>();
  private final Map<String, String> attributes;
  private volatile int deviceCount;

  ExternalDriver(Options options) {
    this.name = options.name();
    this.registrationSocket = options.registry().toAbsolutePath().resolve(name + "-reg.sock");
    this.endpoint = options.plugins().toAbsolutePath().resolve(name).resolve("dra.sock");
    this.deviceCount = options.devices();
    this.attributes = options.attributes();
  }

  /** Exits with 0 after {@code --help} and 2 for a wrong command line. */
  public static void main(String[] args) throws Exception {
    Options options;
    try {
      options = Options.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("external-driver: " + e.getMessage());
      System.err.print(Options.USAGE);
      System.exit(2);
      return;
    }
    if (options == null) {
      System.out.print(Options.USAGE);
      return;
    }
    new ExternalDriver(options).run();
  }

  private void run() throws Exception {
    EventLoopGroup group = new EpollEventLoopGroup(1);
    // the endpoint first: Nodelet checks it as soon as it sees the registration socket
    Server dra = serve(endpoint, new DraPlugin(), group);
    Server registration = serve(registrationSocket, new Registration(), group);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      // the registration socket goes first, so Nodelet withdraws the driver instead of retrying its stream
      deleteQuietly(registrationSocket);
      registration.shutdownNow();
      dra.shutdownNow();
      deleteQuietly(endpoint);
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }));
    System.out.println("serving " + name + ": registration socket " + registrationSocket + ", endpoint " + endpoint);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.trim().matches("\\d{1,5}")) {
        deviceCount = Math.min(Integer.parseInt(line.trim()), 10_000);
        ListAndWatchResourcesResponse snapshot = snapshot();
        watchers.forEach(w -> send(w, snapshot));
        System.out.println("devices: " + deviceCount);
      }
    }
    dra.awaitTermination(); // standard input closed: serve until killed
  }

  /**
   * Binds a gRPC server to a unix socket that only this user can use. The socket is bound under a hidden name
   * (Nodelet ignores names starting with '.'), restricted to 0600 and then renamed into place, so Nodelet never
   * sees it with a looser mode. A socket left behind by an earlier run is replaced.
   */
  private static Server serve(Path socket, BindableService service, EventLoopGroup group) throws IOException {
    Files.createDirectories(socket.getParent(),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Path hidden = socket.resolveSibling("." + socket.getFileName() + ".tmp");
    Files.deleteIfExists(hidden);
    Server server = NettyServerBuilder.forAddress(new DomainSocketAddress(hidden.toString()))
        .channelType(EpollServerDomainSocketChannel.class)
        .withChildOption(ChannelOption.SO_KEEPALIVE, null) // TCP only: gRPC sets it, Netty warns on unix sockets
        .bossEventLoopGroup(group)
        .workerEventLoopGroup(group)
        .addService(service)
        .build()
        .start();
    Files.setPosixFilePermissions(hidden, PosixFilePermissions.fromString("rw-------"));
    Files.move(hidden, socket, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return server;
  }

  private ListAndWatchResourcesResponse snapshot() {
    Pool.Builder pool = Pool.newBuilder().setName("example");
    for (int i = 0; i < deviceCount; i++) {
      pool.addDevices(Device.newBuilder()
          .setName("dev-" + i)
          .putAttributes("model", DeviceAttribute.newBuilder().setStringValue("example-1").build())
          .putAttributes("index", DeviceAttribute.newBuilder().setIntValue(i).build())
          .putAttributes("driverVersion", DeviceAttribute.newBuilder().setVersionValue("1.0.0").build())
          .putCapacity("memory", "16Gi"));
      attributes.forEach((key, value) -> pool.getDevicesBuilder(pool.getDevicesCount() - 1)
          .putAttributes(key, Options.typed(value)));
    }
    return ListAndWatchResourcesResponse.newBuilder().addPools(pool).build();
  }

  private static void send(StreamObserver<ListAndWatchResourcesResponse> watcher,
      ListAndWatchResourcesResponse snapshot) {
    synchronized (watcher) { // a stream takes one message at a time
      watcher.onNext(snapshot);
    }
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      System.err.println("cannot delete " + file + ": " + e);
    }
  }

  /** The kubelet's plugin registration service. */
  private final class Registration extends RegistrationGrpc.RegistrationImplBase {
    @Override
    public void getInfo(InfoRequest request, StreamObserver<PluginInfo> response) {
      response.onNext(PluginInfo.newBuilder()
          .setType("DRAPlugin")
          .setName(name)
          .setEndpoint(endpoint.toString())
          .addSupportedVersions("nodelet.dra.v1")
          .build());
      response.onCompleted();
    }

    @Override
    public void notifyRegistrationStatus(RegistrationStatus status,
        StreamObserver<RegistrationStatusResponse> response) {
      System.out.println(status.getPluginRegistered() ? "registered" : "registration refused: " + status.getError());
      response.onNext(RegistrationStatusResponse.getDefaultInstance());
      response.onCompleted();
    }
  }

  /** The stream of snapshots. */
  private final class DraPlugin extends DRAPluginGrpc.DRAPluginImplBase {
    @Override
    public void listAndWatchResources(ListAndWatchResourcesRequest request,
        StreamObserver<ListAndWatchResourcesResponse> response) {
      ((ServerCallStreamObserver<ListAndWatchResourcesResponse>) response)
          .setOnCancelHandler(() -> watchers.remove(response));
      watchers.add(response);
      send(response, snapshot());
    }
  }
}
