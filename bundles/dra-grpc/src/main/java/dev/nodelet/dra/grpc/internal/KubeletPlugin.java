package dev.nodelet.dra.grpc.internal;

import dev.nodelet.controller.Backoff;
import dev.nodelet.controller.ExecutorScheduler;
import dev.nodelet.controller.Scheduler;
import dev.nodelet.dra.ClaimPreparation;
import dev.nodelet.dra.ClaimRef;
import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.DeviceHealthSource;
import dev.nodelet.dra.HealthListener;
import dev.nodelet.dra.PrepareResult;
import dev.nodelet.dra.PreparedDevice;
import dev.nodelet.dra.SelfPublishedSlices;
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
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A driver written for the kubelet: it publishes its own ResourceSlices and serves
 * {@code k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin} (or {@code v1beta1}, which has no share IDs) and optionally
 * {@code DRAResourceHealth} on its endpoint. One channel per plugin, which grpc-java reconnects after a loss.
 */
final class KubeletPlugin extends RegisteredDriver
    implements ClaimPreparation, DeviceHealthSource, SelfPublishedSlices {

  static final String V1 = "v1.DRAPlugin";
  static final String V1BETA1 = "v1beta1.DRAPlugin";
  static final String HEALTH_V1 = "v1.DRAResourceHealth";
  static final String HEALTH_V1ALPHA1 = "v1alpha1.DRAResourceHealth";
  /** The kubelet's lease of a health report that names no timeout. */
  static final Duration DEFAULT_HEALTH_TIMEOUT = Duration.ofSeconds(30);
  /** The kubelet's health retry after "Unimplemented": the first delay, doubling up to the cap. */
  static final Duration HEALTH_RETRY_INITIAL = Duration.ofSeconds(5);
  static final Duration HEALTH_RETRY_CAP = Duration.ofMinutes(5);

  private final String protocol;
  private final String health;
  private final ManagedChannel channel;
  private final Duration callTimeout;
  private final Scheduler scheduler;
  private final Backoff healthBackoff;

  KubeletPlugin(String driverName, Path endpoint, String protocol, String health, Transport transport,
      Duration callTimeout) {
    this(driverName, endpoint, protocol, health, transport, callTimeout,
        healthBackoff(HEALTH_RETRY_INITIAL, HEALTH_RETRY_CAP), null);
  }

  /**
   * @param protocol {@link #V1} or {@link #V1BETA1}
   * @param health {@link #HEALTH_V1}, {@link #HEALTH_V1ALPHA1} or {@code null} when the plugin advertises neither
   * @param healthBackoff when to ask again for health after "Unimplemented", one per plugin
   * @param healthTime the time of that back-off; {@code null} for the transport's event loop
   */
  KubeletPlugin(String driverName, Path endpoint, String protocol, String health, Transport transport,
      Duration callTimeout, Backoff healthBackoff, Scheduler healthTime) {
    super(driverName, endpoint);
    this.protocol = protocol;
    this.health = health;
    this.callTimeout = callTimeout;
    this.healthBackoff = healthBackoff;
    // the event loop: the timers end with the transport
    this.scheduler = healthTime != null ? healthTime
        : ExecutorScheduler.on(transport.scheduler(), "the DRA gRPC transport");
    // the one connection of this endpoint, for the DRA calls and the health stream alike (kubernetes#134125)
    this.channel = transport.channel(endpoint);
  }

  @Override
  public String protocol() {
    return protocol;
  }

  /** The health service that {@link #watchHealth} calls; {@code null} if the plugin advertises none. */
  String healthProtocol() {
    return health;
  }

  /** How long until the driver may be asked for health again after "Unimplemented"; zero when it may now. */
  long healthRetryInNanos() {
    return healthBackoff.remaining(scheduler.nanoTime()).toNanos();
  }

  /** The health back-off of one plugin: {@code initial} doubling per "Unimplemented" up to {@code cap}. */
  static Backoff healthBackoff(Duration initial, Duration cap) {
    return Backoff.exponential(initial, cap.compareTo(initial) < 0 ? initial : cap).build();
  }

  /**
   * Its own slices and claim preparation always; health only when the plugin advertised a health service. Never
   * {@code DeviceSnapshots}: a kubelet plugin reports no devices to Nodelet.
   */
  @Override
  public List<String> roles() {
    return health == null
        ? List.of(ClaimPreparation.class.getName(), SelfPublishedSlices.class.getName())
        : List.of(ClaimPreparation.class.getName(), SelfPublishedSlices.class.getName(),
            DeviceHealthSource.class.getName());
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

  /**
   * Watches the advertised health service; {@code null} when the plugin advertised none (it is then not registered
   * as a {@link DeviceHealthSource}). "Unimplemented" does not end the watch: see {@link HealthWatch}.
   */
  @Override
  public Subscription watchHealth(HealthListener listener) {
    if (health == null) {
      return null;
    }
    String who = "DRA driver " + driverName + " on " + endpoint;
    if (HEALTH_V1ALPHA1.equals(health)) {
      return new HealthWatch<dev.nodelet.dra.grpc.kubelet.health.v1alpha1.NodeWatchResourcesRequest,
          dev.nodelet.dra.grpc.kubelet.health.v1alpha1.NodeWatchResourcesResponse>(who, health, listener,
          healthBackoff, scheduler,
          observer -> dev.nodelet.dra.grpc.kubelet.health.v1alpha1.DRAResourceHealthGrpc.newStub(channel)
              .nodeWatchResources(dev.nodelet.dra.grpc.kubelet.health.v1alpha1.NodeWatchResourcesRequest
                  .getDefaultInstance(), observer),
          r -> r.getDevicesList().stream().map(d -> health(d.getDevice().getPoolName(),
              d.getDevice().getDeviceName(), d.getHealthValue(), d.getLastUpdatedTime(),
              d.getHealthCheckTimeoutSeconds(), d.getMessage())).toList()).open();
    }
    return new HealthWatch<NodeWatchResourcesRequest, NodeWatchResourcesResponse>(who, health, listener,
        healthBackoff, scheduler,
        observer -> DRAResourceHealthGrpc.newStub(channel).nodeWatchResources(
            NodeWatchResourcesRequest.getDefaultInstance(), observer),
        r -> r.getDevicesList().stream().map(d -> health(d.getDevice().getPoolName(), d.getDevice().getDeviceName(),
            d.getHealthValue(), d.getLastUpdatedTime(), d.getHealthCheckTimeoutSeconds(), d.getMessage())).toList())
        .open();
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
}
