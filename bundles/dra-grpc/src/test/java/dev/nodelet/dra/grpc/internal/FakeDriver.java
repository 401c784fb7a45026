package dev.nodelet.dra.grpc.internal;

import dev.nodelet.dra.grpc.pluginregistration.InfoRequest;
import dev.nodelet.dra.grpc.pluginregistration.PluginInfo;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationGrpc;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationStatus;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationStatusResponse;
import io.grpc.Attributes;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A driver served in the test JVM on real unix sockets: a registration socket in the registration folder answering
 * with the given info, and an endpoint socket serving whatever services a test passes (none: every call is
 * UNIMPLEMENTED). Sockets are bound under a hidden name and renamed into place with the given modes.
 */
public final class FakeDriver implements AutoCloseable {

  public final Path registrationSocket;
  public final Path endpoint;
  public final List<RegistrationStatus> statuses = new CopyOnWriteArrayList<>();
  /** The connections the endpoint accepted. */
  final AtomicInteger endpointConnections = new AtomicInteger();
  private final EventLoopGroup group = new EpollEventLoopGroup(1);
  private final Server registrationServer;
  private final Server endpointServer;

  public FakeDriver(Path registrationSocket, Path endpoint, PluginInfo info, String registrationMode,
      String endpointMode,
      ServerServiceDefinition... endpointServices) {
    this.registrationSocket = registrationSocket;
    this.endpoint = endpoint;
    endpointServer = serve(endpoint, endpointMode, endpointConnections, endpointServices);
    registrationServer = serve(registrationSocket, registrationMode, new AtomicInteger(),
        new Registration(info).bindService());
  }

  /** A driver named {@code name} with the endpoint {@code <plugins>/<name>.sock} and the usual modes. */
  static FakeDriver of(Path registry, Path plugins, String name, BindableService... endpointServices) {
    return new FakeDriver(registry.resolve(name + "-reg.sock"), plugins.resolve(name + ".sock"), info(name,
        plugins.resolve(name + ".sock")), "rw-------", "rw-------",
        Arrays.stream(endpointServices).map(BindableService::bindService)
            .toArray(ServerServiceDefinition[]::new));
  }

  static PluginInfo info(String name, Path endpoint) {
    return PluginInfo.newBuilder().setType("DRAPlugin").setName(name).setEndpoint(endpoint.toString())
        .addSupportedVersions("nodelet.dra.v1").build();
  }

  private Server serve(Path socket, String mode, AtomicInteger connections, ServerServiceDefinition... services) {
    try {
      Path hidden = socket.resolveSibling("." + socket.getFileName());
      NettyServerBuilder builder = NettyServerBuilder.forAddress(new DomainSocketAddress(hidden.toString()))
          .channelType(EpollServerDomainSocketChannel.class)
          .withChildOption(ChannelOption.SO_KEEPALIVE, null)
          .bossEventLoopGroup(group)
          .workerEventLoopGroup(group)
          .directExecutor()
          .addTransportFilter(new ServerTransportFilter() {
            @Override
            public Attributes transportReady(Attributes attributes) {
              connections.incrementAndGet();
              return attributes;
            }
          });
      for (ServerServiceDefinition service : services) {
        builder.addService(service);
      }
      Server server = builder.build().start();
      Files.setPosixFilePermissions(hidden, PosixFilePermissions.fromString(mode));
      Files.move(hidden, socket, StandardCopyOption.ATOMIC_MOVE);
      return server;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Stops serving both sockets and leaves their files behind, as a driver killed with SIGKILL does. */
  public void kill() throws InterruptedException {
    registrationServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    endpointServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** Stops serving the endpoint and leaves both socket files behind, as a driver killed with SIGKILL does. */
  void killEndpoint() throws InterruptedException {
    endpointServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  /** Stops serving and removes both sockets. */
  @Override
  public void close() throws Exception {
    Files.deleteIfExists(registrationSocket); // a killed driver's socket may have been replaced: so be it
    registrationServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    endpointServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    Files.deleteIfExists(endpoint);
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  private final class Registration extends RegistrationGrpc.RegistrationImplBase {
    private final PluginInfo info;

    Registration(PluginInfo info) {
      this.info = info;
    }

    @Override
    public void getInfo(InfoRequest request, StreamObserver<PluginInfo> response) {
      response.onNext(info);
      response.onCompleted();
    }

    @Override
    public void notifyRegistrationStatus(RegistrationStatus status,
        StreamObserver<RegistrationStatusResponse> response) {
      statuses.add(status);
      response.onNext(RegistrationStatusResponse.getDefaultInstance());
      response.onCompleted();
    }
  }
}
