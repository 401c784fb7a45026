package dev.nodelet.dra.grpc.internal;

import dev.nodelet.dra.ClaimRef;
import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.HealthListener;
import dev.nodelet.dra.PrepareResult;
import dev.nodelet.dra.PreparedDevice;
import dev.nodelet.dra.Subscription;
import dev.nodelet.dra.grpc.kubelet.dra.v1.Claim;
import dev.nodelet.dra.grpc.kubelet.dra.v1.DRAPluginGrpc;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodePrepareResourceResponse;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodePrepareResourcesRequest;
import dev.nodelet.dra.grpc.kubelet.dra.v1.NodeUnprepareResourcesRequest;
import dev.nodelet.dra.grpc.kubelet.health.v1.DRAResourceHealthGrpc;
import dev.nodelet.dra.grpc.kubelet.health.v1.NodeWatchResourcesRequest;
import dev.nodelet.dra.grpc.kubelet.health.v1.NodeWatchResourcesResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * A driver written for the kubelet: it publishes its own ResourceSlices and serves
 * {@code k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin} (or {@code v1beta1}, which has no share IDs) and optionally
 * {@code DRAResourceHealth} on its endpoint. One channel per plugin, which grpc-java reconnects after a loss.
 */
final class KubeletPlugin extends RegisteredDriver {

  static final String V1 = "v1.DRAPlugin";
  static final String V1BETA1 = "v1beta1.DRAPlugin";
  static final String HEALTH_V1 = "v1.DRAResourceHealth";
  static final String HEALTH_V1ALPHA1 = "v1alpha1.DRAResourceHealth";
  /** The kubelet's deadline for one prepare or unprepare call. */
  static final Duration CALL_TIMEOUT = Duration.ofSeconds(45);
  /** The kubelet's lease of a health report that names no timeout. */
  static final Duration DEFAULT_HEALTH_TIMEOUT = Duration.ofSeconds(30);

  private final String protocol;
  private final String health;
  private final ManagedChannel channel;
  private final Duration callTimeout;

  /**
   * @param protocol {@link #V1} or {@link #V1BETA1}
   * @param health {@link #HEALTH_V1} or {@link #HEALTH_V1ALPHA1}
   */
  KubeletPlugin(String driverName, Path endpoint, String protocol, String health, Transport transport,
      Duration callTimeout) {
    super(driverName, endpoint);
    this.protocol = protocol;
    this.health = health;
    this.callTimeout = callTimeout;
    this.channel = transport.channel(endpoint);
  }

  @Override
  public String protocol() {
    return protocol;
  }

  /** The health service that {@link #watchHealth} calls. */
  String healthProtocol() {
    return health;
  }

  @Override
  public boolean publishesOwnSlices() {
    return true;
  }

  @Override
  public boolean preparesClaims() {
    return true;
  }

  /** Kubelet plugins report no devices to Nodelet: they write their slices themselves. */
  @Override
  public Subscription subscribe(dev.nodelet.dra.SnapshotListener listener) {
    listener.onError(new UnsupportedOperationException("DRA driver " + driverName
        + " publishes its own ResourceSlices"), false);
    return () -> { };
  }

  @Override
  public Map<String, PrepareResult> prepare(List<ClaimRef> claims) {
    try {
      if (V1BETA1.equals(protocol)) {
        var request = dev.nodelet.dra.grpc.kubelet.dra.v1beta1.NodePrepareResourcesRequest.newBuilder();
        claims.forEach(c -> request.addClaims(dev.nodelet.dra.grpc.kubelet.dra.v1beta1.Claim.newBuilder()
            .setNamespace(c.namespace()).setName(c.name()).setUid(c.uid())));
        var response = dev.nodelet.dra.grpc.kubelet.dra.v1beta1.DRAPluginGrpc.newBlockingStub(channel)
            .withDeadlineAfter(callTimeout.toMillis(), TimeUnit.MILLISECONDS).nodePrepareResources(request.build());
        return convert(response.getClaimsMap(), r -> r.getError().isEmpty()
            ? PrepareResult.prepared(r.getDevicesList().stream().map(d -> new PreparedDevice(d.getRequestNamesList(),
                d.getPoolName(), d.getDeviceName(), d.getCdiDeviceIdsList(), null)).toList())
            : PrepareResult.failed(r.getError()));
      }
      NodePrepareResourcesRequest.Builder request = NodePrepareResourcesRequest.newBuilder();
      claims.forEach(c -> request.addClaims(claim(c)));
      var response = DRAPluginGrpc.newBlockingStub(channel)
          .withDeadlineAfter(callTimeout.toMillis(), TimeUnit.MILLISECONDS).nodePrepareResources(request.build());
      return convert(response.getClaimsMap(), KubeletPlugin::result);
    } catch (StatusRuntimeException e) {
      throw new ExternalDriverException("NodePrepareResources of DRA driver " + driverName + " on " + endpoint
          + " failed: " + GrpcDraDriver.describe(e.getStatus()), e);
    }
  }

  @Override
  public Map<String, String> unprepare(List<ClaimRef> claims) {
    Map<String, String> errors = new HashMap<>();
    try {
      if (V1BETA1.equals(protocol)) {
        var request = dev.nodelet.dra.grpc.kubelet.dra.v1beta1.NodeUnprepareResourcesRequest.newBuilder();
        claims.forEach(c -> request.addClaims(dev.nodelet.dra.grpc.kubelet.dra.v1beta1.Claim.newBuilder()
            .setNamespace(c.namespace()).setName(c.name()).setUid(c.uid())));
        var response = dev.nodelet.dra.grpc.kubelet.dra.v1beta1.DRAPluginGrpc.newBlockingStub(channel)
            .withDeadlineAfter(callTimeout.toMillis(), TimeUnit.MILLISECONDS).nodeUnprepareResources(request.build());
        response.getClaimsMap().forEach((uid, r) -> {
          if (!r.getError().isEmpty()) {
            errors.put(uid, r.getError());
          }
        });
      } else {
        NodeUnprepareResourcesRequest.Builder request = NodeUnprepareResourcesRequest.newBuilder();
        claims.forEach(c -> request.addClaims(claim(c)));
        var response = DRAPluginGrpc.newBlockingStub(channel)
            .withDeadlineAfter(callTimeout.toMillis(), TimeUnit.MILLISECONDS).nodeUnprepareResources(request.build());
        response.getClaimsMap().forEach((uid, r) -> {
          if (!r.getError().isEmpty()) {
            errors.put(uid, r.getError());
          }
        });
      }
    } catch (StatusRuntimeException e) {
      throw new ExternalDriverException("NodeUnprepareResources of DRA driver " + driverName + " on " + endpoint
          + " failed: " + GrpcDraDriver.describe(e.getStatus()), e);
    }
    return errors;
  }

  @Override
  public Subscription watchHealth(HealthListener listener) {
    AtomicBoolean ended = new AtomicBoolean();
    if (HEALTH_V1ALPHA1.equals(health)) {
      var observer = new HealthStream<dev.nodelet.dra.grpc.kubelet.health.v1alpha1.NodeWatchResourcesRequest,
          dev.nodelet.dra.grpc.kubelet.health.v1alpha1.NodeWatchResourcesResponse>(listener, ended,
          r -> r.getDevicesList().stream().map(d -> health(d.getDevice().getPoolName(),
              d.getDevice().getDeviceName(), d.getHealthValue(), d.getLastUpdatedTime(),
              d.getHealthCheckTimeoutSeconds(), d.getMessage())).toList());
      dev.nodelet.dra.grpc.kubelet.health.v1alpha1.DRAResourceHealthGrpc.newStub(channel).nodeWatchResources(
          dev.nodelet.dra.grpc.kubelet.health.v1alpha1.NodeWatchResourcesRequest.getDefaultInstance(), observer);
      return observer;
    }
    var observer = new HealthStream<NodeWatchResourcesRequest, NodeWatchResourcesResponse>(listener, ended,
        r -> r.getDevicesList().stream().map(d -> health(d.getDevice().getPoolName(), d.getDevice().getDeviceName(),
            d.getHealthValue(), d.getLastUpdatedTime(), d.getHealthCheckTimeoutSeconds(), d.getMessage())).toList());
    DRAResourceHealthGrpc.newStub(channel).nodeWatchResources(NodeWatchResourcesRequest.getDefaultInstance(),
        observer);
    return observer;
  }

  private static DeviceHealth health(String pool, String device, int health, long lastUpdated, long timeoutSeconds,
      String message) {
    DeviceHealth.Health value = switch (health) {
      case 1 -> DeviceHealth.Health.HEALTHY;
      case 2 -> DeviceHealth.Health.UNHEALTHY;
      default -> DeviceHealth.Health.UNKNOWN;
    };
    return new DeviceHealth(pool, device, value, Instant.ofEpochSecond(lastUpdated),
        timeoutSeconds > 0 ? Duration.ofSeconds(timeoutSeconds) : DEFAULT_HEALTH_TIMEOUT, message);
  }

  @Override
  public void close() {
    channel.shutdownNow();
  }

  @Override
  public String toString() {
    return "kubelet DRA plugin " + driverName + " at " + endpoint + " (" + protocol + ")";
  }

  private static Claim claim(ClaimRef c) {
    return Claim.newBuilder().setNamespace(c.namespace()).setName(c.name()).setUid(c.uid()).build();
  }

  private static PrepareResult result(NodePrepareResourceResponse r) {
    if (!r.getError().isEmpty()) {
      return PrepareResult.failed(r.getError());
    }
    List<PreparedDevice> devices = new ArrayList<>();
    for (var d : r.getDevicesList()) {
      devices.add(new PreparedDevice(d.getRequestNamesList(), d.getPoolName(), d.getDeviceName(),
          d.getCdiDeviceIdsList(), d.hasShareId() ? d.getShareId() : null));
    }
    return PrepareResult.prepared(devices);
  }

  private static <T> Map<String, PrepareResult> convert(Map<String, T> claims, Function<T, PrepareResult> f) {
    Map<String, PrepareResult> results = new HashMap<>();
    claims.forEach((uid, r) -> results.put(uid, r == null ? PrepareResult.prepared(List.of()) : f.apply(r)));
    return results;
  }

  /** One health call; the listener hears of the end once and nothing after it or after {@link #close}. */
  private final class HealthStream<Q, R> implements ClientResponseObserver<Q, R>, Subscription {
    private final HealthListener listener;
    private final AtomicBoolean ended;
    private final Function<R, List<DeviceHealth>> decode;
    private volatile ClientCallStreamObserver<Q> call;

    HealthStream(HealthListener listener, AtomicBoolean ended, Function<R, List<DeviceHealth>> decode) {
      this.listener = listener;
      this.ended = ended;
      this.decode = decode;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<Q> requestStream) {
      this.call = requestStream;
    }

    @Override
    public void onNext(R response) {
      if (!ended.get()) {
        listener.onHealth(decode.apply(response));
      }
    }

    @Override
    public void onError(Throwable t) {
      if (ended.compareAndSet(false, true)) {
        Status status = Status.fromThrowable(t);
        listener.onError(new ExternalDriverException("NodeWatchResources of DRA driver " + driverName + " on "
            + endpoint + " failed: " + GrpcDraDriver.describe(status), t),
            status.getCode() != Status.Code.UNIMPLEMENTED);
      }
    }

    @Override
    public void onCompleted() {
      if (ended.compareAndSet(false, true)) {
        listener.onError(new ExternalDriverException("NodeWatchResources of DRA driver " + driverName
            + " ended"), true);
      }
    }

    @Override
    public void close() {
      if (ended.compareAndSet(false, true)) {
        ClientCallStreamObserver<Q> c = call;
        if (c != null) {
          c.cancel("watch closed", null);
        }
      }
    }
  }
}
