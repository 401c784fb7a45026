package dev.nodelet.benchmarks;

import dev.nodelet.dra.grpc.kubelet.dra.v1.Claim;
import dev.nodelet.dra.grpc.kubelet.dra.v1.DRAPluginGrpc;
import dev.nodelet.dra.grpc.kubelet.dra.v1.Device;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodePrepareResourceResponse;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodePrepareResourcesRequest;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodePrepareResourcesResponse;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodeUnprepareResourceResponse;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodeUnprepareResourcesRequest;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodeUnprepareResourcesResponse;
import dev.nodelet.dra.grpc.kubelet.health.v1.DRAResourceHealthGrpc;
import dev.nodelet.dra.grpc.kubelet.health.v1.DeviceHealth;
import dev.nodelet.dra.grpc.kubelet.health.v1.DeviceIdentifier;
import dev.nodelet.dra.grpc.kubelet.health.v1.HealthStatus;
import dev.nodelet.dra.grpc.kubelet.health.v1.NodeWatchResourcesRequest;
import dev.nodelet.dra.grpc.kubelet.health.v1.NodeWatchResourcesResponse;
import dev.nodelet.dra.grpc.pluginregistration.InfoRequest;
import dev.nodelet.dra.grpc.pluginregistration.PluginInfo;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationGrpc;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationStatus;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationStatusResponse;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.BindableService;
import io.grpc.Server;
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
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A DRA driver written for the kubelet, served on real unix sockets as the Go {@code kubeletplugin} helper lays them
 * out: {@code pluginregistration.Registration} on {@code <registry>/<driver>-reg.sock} (type {@code DRAPlugin},
 * versions {@code v1.DRAPlugin} and {@code v1.DRAResourceHealth}), the kubelet's DRA API v1 and health API v1 on
 * {@code <plugins>/<driver>/dra.sock}. {@code NodePrepareResources} reads each claim from the API server, as a real
 * driver does, and returns the devices of its allocation; each {@code NodeWatchResources} gets every device healthy
 * at once. Sockets are bound under hidden names, restricted to 0600 and renamed into place; {@link #kill()} stops
 * serving and leaves the files behind, as a driver process killed with SIGKILL does.
 */
final class KubeletPluginServer implements AutoCloseable {

  private final String driver;
  private final String pool;
  private final int devices;
  private final KubernetesClient client;
  private final Path registrationSocket;
  private final Path endpoint;
  private final EventLoopGroup group = new EpollEventLoopGroup(1);
  private final Server draServer;
  private final Server registrationServer;
  private volatile long registeredAtNanos;

  KubeletPluginServer(String driver, String pool, int devices, KubernetesClient client, Path registry, Path plugins) {
    this.driver = driver;
    this.pool = pool;
    this.devices = devices;
    this.client = client;
    this.registrationSocket = registry.resolve(driver + "-reg.sock");
    this.endpoint = plugins.resolve(driver).resolve("dra.sock");
    this.draServer = serve(endpoint, new DraPlugin(), new Health());
    this.registrationServer = serve(registrationSocket, new Registration());
  }

  /** The registration socket, in place once the constructor returned. */
  Path registrationSocket() {
    return registrationSocket;
  }

  /** When Nodelet told the driver it is registered ({@code System.nanoTime()}); 0 before. */
  long registeredAtNanos() {
    return registeredAtNanos;
  }

  private Server serve(Path socket, BindableService... services) {
    try {
      Files.createDirectories(socket.getParent(),
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      Path hidden = socket.resolveSibling("." + socket.getFileName() + ".tmp");
      Files.deleteIfExists(hidden);
      NettyServerBuilder builder = NettyServerBuilder.forAddress(new DomainSocketAddress(hidden.toString()))
          .channelType(EpollServerDomainSocketChannel.class)
          .withChildOption(ChannelOption.SO_KEEPALIVE, null) // TCP only
          .bossEventLoopGroup(group)
          .workerEventLoopGroup(group);
      for (BindableService service : services) {
        builder.addService(service);
      }
      Server server = builder.build().start();
      Files.setPosixFilePermissions(hidden, PosixFilePermissions.fromString("rw-------"));
      Files.move(hidden, socket, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      return server;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Stops serving and leaves both socket files behind. */
  void kill() {
    registrationServer.shutdownNow();
    draServer.shutdownNow();
    try {
      registrationServer.awaitTermination(5, TimeUnit.SECONDS);
      draServer.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  /** Stops serving and removes both sockets, as the helper does on a clean stop. */
  @Override
  public void close() {
    kill();
    try {
      Files.deleteIfExists(registrationSocket);
      Files.deleteIfExists(endpoint);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private final class Registration extends RegistrationGrpc.RegistrationImplBase {
    @Override
    public void getInfo(InfoRequest request, StreamObserver<PluginInfo> response) {
      response.onNext(PluginInfo.newBuilder().setType("DRAPlugin").setName(driver).setEndpoint(endpoint.toString())
          .addSupportedVersions("v1.DRAPlugin").addSupportedVersions("v1.DRAResourceHealth").build());
      response.onCompleted();
    }

    @Override
    public void notifyRegistrationStatus(RegistrationStatus status,
        StreamObserver<RegistrationStatusResponse> response) {
      if (status.getPluginRegistered()) {
        registeredAtNanos = System.nanoTime();
      }
      response.onNext(RegistrationStatusResponse.getDefaultInstance());
      response.onCompleted();
    }
  }

  private final class DraPlugin extends DRAPluginGrpc.DRAPluginImplBase {
    @Override
    public void nodePrepareResources(NodePrepareResourcesRequest request,
        StreamObserver<NodePrepareResourcesResponse> response) {
      NodePrepareResourcesResponse.Builder out = NodePrepareResourcesResponse.newBuilder();
      for (Claim claim : request.getClaimsList()) {
        out.putClaims(claim.getUid(), prepare(claim));
      }
      response.onNext(out.build());
      response.onCompleted();
    }

    private NodePrepareResourceResponse prepare(Claim claim) {
      ResourceClaim current = client.resources(ResourceClaim.class).inNamespace(claim.getNamespace())
          .withName(claim.getName()).get();
      if (current == null || !claim.getUid().equals(current.getMetadata().getUid())
          || current.getStatus() == null || current.getStatus().getAllocation() == null) {
        return NodePrepareResourceResponse.newBuilder().setError("claim " + claim.getNamespace() + "/"
            + claim.getName() + " (" + claim.getUid() + ") is not allocated, or gone").build();
      }
      NodePrepareResourceResponse.Builder out = NodePrepareResourceResponse.newBuilder();
      current.getStatus().getAllocation().getDevices().getResults().stream().filter(r -> driver.equals(r.getDriver()))
          .forEach(r -> out.addDevices(Device.newBuilder().addRequestNames(r.getRequest()).setPoolName(r.getPool())
              .setDeviceName(r.getDevice()).addCdiDeviceIds("k8s." + driver + "/device=" + r.getDevice())));
      return out.build();
    }

    @Override
    public void nodeUnprepareResources(NodeUnprepareResourcesRequest request,
        StreamObserver<NodeUnprepareResourcesResponse> response) {
      NodeUnprepareResourcesResponse.Builder out = NodeUnprepareResourcesResponse.newBuilder();
      request.getClaimsList().forEach(c -> out.putClaims(c.getUid(),
          NodeUnprepareResourceResponse.getDefaultInstance()));
      response.onNext(out.build());
      response.onCompleted();
    }
  }

  private final class Health extends DRAResourceHealthGrpc.DRAResourceHealthImplBase {
    @Override
    public void nodeWatchResources(NodeWatchResourcesRequest request,
        StreamObserver<NodeWatchResourcesResponse> response) {
      NodeWatchResourcesResponse.Builder out = NodeWatchResourcesResponse.newBuilder();
      long now = Instant.now().getEpochSecond();
      for (int i = 0; i < devices; i++) {
        out.addDevices(DeviceHealth.newBuilder().setDevice(DeviceIdentifier.newBuilder().setPoolName(pool)
            .setDeviceName("dev-" + i)).setHealth(HealthStatus.HEALTHY).setLastUpdatedTime(now)
            .setHealthCheckTimeoutSeconds(30));
      }
      response.onNext(out.build()); // the stream stays open: later changes would follow
    }
  }

  @Override
  public String toString() {
    return "kubelet plugin " + driver + " at " + registrationSocket + " (" + List.of(endpoint) + ")";
  }
}
