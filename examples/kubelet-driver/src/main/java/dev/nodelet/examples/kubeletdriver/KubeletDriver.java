package dev.nodelet.examples.kubeletdriver;

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
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
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
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * A DRA driver written for the kubelet, as small as it gets, to show that such a driver runs with Nodelet
 * unchanged. Like a real driver it
 * <ul>
 *   <li>publishes its own ResourceSlice (one pool named after the node, devices {@code dev-0 ... dev-N-1});</li>
 *   <li>serves {@code pluginregistration.Registration} on {@code <registry>/<name>-reg.sock}, type
 *       {@code DRAPlugin}, supported versions {@code v1.DRAPlugin} and {@code v1.DRAResourceHealth};</li>
 *   <li>serves {@code k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin} on {@code <plugins>/<name>/dra.sock}:
 *       {@code NodePrepareResources} reads each claim, checks its UID, and returns the devices of its allocation
 *       that belong to this driver with the CDI device ID {@code k8s.<name>/device=<device>};
 *       {@code NodeUnprepareResources} forgets them;</li>
 *   <li>returns the allocation's share ID of a device with consumable capacity as the device's {@code share_id};</li>
 *   <li>serves {@code v1.DRAResourceHealth} on the same socket: every device Healthy at first, each report with
 *       the {@code --health-timeout} (30 s by default) as {@code health_check_timeout_seconds} and a message.</li>
 * </ul>
 * Lines on standard input: {@code unhealthy dev-0 ECC errors} / {@code healthy dev-0} change a device's health and
 * message; {@code silent} stops health reports (Nodelet marks the devices Unknown after their timeout).
 *
 * <p>Usage: {@link Options#USAGE}; {@code --help} prints it. Start it with {@code umask 077}: its sockets are bound
 * under hidden names, restricted to 0600 and renamed into place either way.
 */
public final class KubeletDriver {

  private final String name;
  private final String node;
  private final int devices;
  private final Map<String, String> attributes;
  private final long healthTimeoutSeconds;
  private final KubernetesClient client;
  private final Path registrationSocket;
  private final Path endpoint;
  private final Map<String, List<Device>> prepared = new ConcurrentHashMap<>(); // by claim UID
  private final Map<String, Report> health = new ConcurrentHashMap<>();
  private final Set<StreamObserver<NodeWatchResourcesResponse>> watchers = new CopyOnWriteArraySet<>();
  private volatile boolean silent;

  KubeletDriver(Options options, KubernetesClient client) {
    this.name = options.name();
    this.node = options.node();
    this.devices = options.devices();
    this.attributes = options.attributes();
    this.healthTimeoutSeconds = options.healthTimeoutSeconds();
    this.client = client;
    this.registrationSocket = options.registry().toAbsolutePath().resolve(name + "-reg.sock");
    this.endpoint = options.plugins().toAbsolutePath().resolve(name).resolve("dra.sock");
    IntStream.range(0, devices).forEach(i -> health.put("dev-" + i, new Report(HealthStatus.HEALTHY, "")));
  }

  /** What the driver reports for one device. */
  private record Report(HealthStatus status, String message) {
  }

  /** Exits with 0 after {@code --help}, 2 for a wrong command line, 1 when the slice cannot be published. */
  public static void main(String[] args) throws Exception {
    Options options;
    try {
      options = Options.parse(args, System.getenv("NODE_NAME"));
    } catch (IllegalArgumentException e) {
      System.err.println("kubelet-driver: " + e.getMessage());
      System.err.print(Options.USAGE);
      System.exit(2);
      return;
    }
    if (options == null) {
      System.out.print(Options.USAGE);
      return;
    }
    Config config = options.server() != null ? new ConfigBuilder().withMasterUrl(options.server()).build()
        : options.kubeconfig() != null ? Config.fromKubeconfig(Files.readString(options.kubeconfig()))
        : Config.autoConfigure(null);
    // a few retries, not fabric8's ten with doubling delays: a wrong URL fails within seconds, not minutes
    config = new ConfigBuilder(config).withRequestRetryBackoffLimit(2).build();
    try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build()) {
      KubeletDriver driver = new KubeletDriver(options, client);
      try {
        driver.publishSlice();
      } catch (KubernetesClientException e) {
        Throwable cause = e.getCause() == null ? e : e.getCause(); // fabric8's own message says little
        System.err.println("kubelet-driver: cannot publish the ResourceSlice to " + config.getMasterUrl() + ": "
            + cause + " (check the URL, https:// for a TLS server, and the credentials of --kubeconfig)");
        System.exit(1);
      }
      driver.run();
    }
  }

  private void run() throws Exception {
    EventLoopGroup group = new EpollEventLoopGroup(1);
    Server dra = serve(endpoint, group, new DraPlugin(), new Health());
    Server registration = serve(registrationSocket, group, new Registration());
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      deleteQuietly(registrationSocket);
      registration.shutdownNow();
      dra.shutdownNow();
      deleteQuietly(endpoint);
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }));
    System.out.println("serving " + name + ": registration socket " + registrationSocket + ", endpoint " + endpoint);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] words = line.trim().split("\\s+", 3);
      if (words.length >= 2 && health.containsKey(words[1])
          && (words[0].equals("healthy") || words[0].equals("unhealthy"))) {
        String message = words.length == 3 ? words[2] : "";
        health.put(words[1], new Report(words[0].equals("healthy") ? HealthStatus.HEALTHY : HealthStatus.UNHEALTHY,
            message));
        silent = false;
        watchers.forEach(this::report);
        System.out.println(words[1] + " " + words[0] + (message.isEmpty() ? "" : ": " + message));
      } else if (words[0].equals("silent")) {
        silent = true;
        System.out.println("health reports stopped");
      }
    }
    dra.awaitTermination(); // standard input closed: serve until killed
  }

  /** The driver's own ResourceSlice, as a real driver's slice controller writes it. */
  private void publishSlice() {
    Map<String, DeviceAttribute> typed = new TreeMap<>();
    attributes.forEach((key, value) -> typed.put(key, Options.typed(value)));
    ResourceSlice slice = new ResourceSliceBuilder().withNewMetadata().withName(node + "-" + name).endMetadata()
        .withNewSpec().withDriver(name).withNodeName(node).withNewPool().withName(node).withGeneration(1L)
        .withResourceSliceCount(1L).endPool()
        .withDevices(IntStream.range(0, devices).mapToObj(i -> new DeviceBuilder().withName("dev-" + i)
            .withAttributes(typed.isEmpty() ? null : typed).build()).toList())
        .endSpec().build();
    System.out.println("publishing ResourceSlice " + slice.getMetadata().getName() + " to " + client.getMasterUrl());
    client.resources(ResourceSlice.class).resource(slice).createOr(NonDeletingOperation::update);
    System.out.println("published ResourceSlice " + slice.getMetadata().getName());
  }

  private static Server serve(Path socket, EventLoopGroup group, BindableService... services) throws IOException {
    Files.createDirectories(socket.getParent(),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Path hidden = socket.resolveSibling("." + socket.getFileName() + ".tmp");
    Files.deleteIfExists(hidden);
    NettyServerBuilder builder = NettyServerBuilder.forAddress(new DomainSocketAddress(hidden.toString()))
        .channelType(EpollServerDomainSocketChannel.class)
        .withChildOption(ChannelOption.SO_KEEPALIVE, null) // TCP only: gRPC sets it, Netty warns on unix sockets
        .bossEventLoopGroup(group)
        .workerEventLoopGroup(group);
    for (BindableService service : services) {
      builder.addService(service);
    }
    Server server = builder.build().start();
    Files.setPosixFilePermissions(hidden, PosixFilePermissions.fromString("rw-------"));
    Files.move(hidden, socket, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return server;
  }

  private void report(StreamObserver<NodeWatchResourcesResponse> watcher) {
    if (silent) {
      return;
    }
    NodeWatchResourcesResponse.Builder out = NodeWatchResourcesResponse.newBuilder();
    health.forEach((device, report) -> out.addDevices(DeviceHealth.newBuilder()
        .setDevice(DeviceIdentifier.newBuilder().setPoolName(node).setDeviceName(device))
        .setHealth(report.status()).setMessage(report.message()).setLastUpdatedTime(Instant.now().getEpochSecond())
        .setHealthCheckTimeoutSeconds(healthTimeoutSeconds)));
    synchronized (watcher) { // a stream takes one message at a time
      watcher.onNext(out.build());
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
      response.onNext(PluginInfo.newBuilder().setType("DRAPlugin").setName(name).setEndpoint(endpoint.toString())
          .addSupportedVersions("v1.DRAPlugin").addSupportedVersions("v1.DRAResourceHealth").build());
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

  /** The kubelet's DRA API v1. */
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
      List<Device> done = prepared.get(claim.getUid());
      if (done != null) {
        return NodePrepareResourceResponse.newBuilder().addAllDevices(done).build(); // the same devices again
      }
      ResourceClaim current = client.resources(ResourceClaim.class).inNamespace(claim.getNamespace())
          .withName(claim.getName()).get();
      if (current == null || !claim.getUid().equals(current.getMetadata().getUid())) {
        return NodePrepareResourceResponse.newBuilder().setError("claim " + claim.getNamespace() + "/"
            + claim.getName() + " with UID " + claim.getUid() + " does not exist").build();
      }
      if (current.getStatus() == null || current.getStatus().getAllocation() == null) {
        return NodePrepareResourceResponse.newBuilder().setError("claim " + claim.getName() + " is not allocated")
            .build();
      }
      List<Device> devices = current.getStatus().getAllocation().getDevices().getResults().stream()
          .filter(r -> name.equals(r.getDriver()))
          .map(KubeletDriver.this::device)
          .toList();
      prepared.put(claim.getUid(), devices);
      System.out.println("prepared " + claim.getNamespace() + "/" + claim.getName());
      return NodePrepareResourceResponse.newBuilder().addAllDevices(devices).build();
    }

    @Override
    public void nodeUnprepareResources(NodeUnprepareResourcesRequest request,
        StreamObserver<NodeUnprepareResourcesResponse> response) {
      NodeUnprepareResourcesResponse.Builder out = NodeUnprepareResourcesResponse.newBuilder();
      for (Claim claim : request.getClaimsList()) {
        prepared.remove(claim.getUid());
        System.out.println("unprepared " + claim.getNamespace() + "/" + claim.getName());
        out.putClaims(claim.getUid(), NodeUnprepareResourceResponse.getDefaultInstance());
      }
      response.onNext(out.build());
      response.onCompleted();
    }
  }

  private Device device(DeviceRequestAllocationResult r) {
    Device.Builder device = Device.newBuilder().addRequestNames(r.getRequest()).setPoolName(r.getPool())
        .setDeviceName(r.getDevice()).addCdiDeviceIds("k8s." + name + "/device=" + r.getDevice());
    if (r.getShareID() != null) {
      device.setShareId(r.getShareID()); // one share of a device with consumable capacity
    }
    return device.build();
  }

  /** The kubelet's device health API v1: a report at once and after every change. */
  private final class Health extends DRAResourceHealthGrpc.DRAResourceHealthImplBase {
    @Override
    public void nodeWatchResources(NodeWatchResourcesRequest request,
        StreamObserver<NodeWatchResourcesResponse> response) {
      ((ServerCallStreamObserver<NodeWatchResourcesResponse>) response)
          .setOnCancelHandler(() -> watchers.remove(response));
      watchers.add(response);
      report(response);
    }
  }
}
