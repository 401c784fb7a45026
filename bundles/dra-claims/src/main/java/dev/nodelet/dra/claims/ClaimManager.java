package dev.nodelet.dra.claims;

import dev.nodelet.dra.ClaimPreparation;
import dev.nodelet.dra.DeviceHealthSource;
import dev.nodelet.dra.claims.internal.ClaimReconciler;
import dev.nodelet.dra.claims.internal.ClaimsMetrics;
import dev.nodelet.dra.claims.internal.FeatureGates;
import dev.nodelet.dra.claims.internal.ManagerSettings;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.prometheus.metrics.model.registry.MultiCollector;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;

/**
 * Prepares the ResourceClaims of the pods of one node with their drivers, as the kubelet's DRA manager does; plain
 * Java, so that a driver can be tested without OSGi. Build it with {@link #builder}, {@link #start()} it, feed it
 * the node's pods ({@link #podUpdated}, {@link #podRemoved}), the drivers that prepare claims ({@link #addDriver},
 * {@link #removeDriver}) and those that report health ({@link #addHealthSource}, {@link #removeHealthSource}), and
 * {@link #close()} it.
 *
 * <p>All work runs on one thread of the executor, so drivers are called one at a time. For each active pod (not
 * in a terminal phase and not being deleted) the manager resolves {@code spec.resourceClaims} ({@code
 * resourceClaimName}, or the pod's {@code status.resourceClaimStatuses} for a template) and, with
 * {@code DRAExtendedResource}, {@code status.extendedResourceClaimStatus.resourceClaimName}; reads each claim from
 * the API server, and requires it to be allocated, reserved for the pod (or, with {@code DRAWorkloadResourceClaims},
 * for its PodGroup; a template claim controlled by either) and every driver of
 * {@code status.allocation.devices.results} to be registered. It then records the pod in the checkpoint
 * <em>before</em> calling {@code prepare} of each driver (batched per driver, drivers in name order), and records the
 * devices once every driver succeeded. When no active pod uses a claim any more it calls {@code unprepare} of each of
 * its drivers and drops it from the checkpoint. Pods in the checkpoint that the pod source never reported are taken
 * as gone at the first sweep (by default 60 s after the start), so a restart leaks nothing. Every failure is kept per
 * claim and retried with an exponential backoff.
 *
 * <p>Device health reported by the drivers is kept in {@code dra_health_state} next to the checkpoint and written
 * to the pods' {@code status.containerStatuses[].allocatedResourcesStatus}, as the kubelet does.
 *
 * <p>As in the kubelet, claims loaded from the checkpoint count as not prepared: a pod that starts after a restart
 * has its claims prepared again (drivers are idempotent; this also recreates CDI specs that a reboot wiped), while a
 * pod already running keeps the devices from the checkpoint. Nodelet differs in one way: an unusable checkpoint is
 * moved aside and rebuilt instead of stopping the node.
 */
public final class ClaimManager implements ClaimStatus, AutoCloseable {

  /** The settings of a claim manager; {@link #builder} has the defaults. */
  public static final class Builder {
    private final KubernetesClient client;
    private final String nodeName;
    private Path stateDirectory = Path.of("/var/lib/nodelet");
    private Clock clock = Clock.systemUTC();
    private ScheduledExecutorService executor;
    private Duration sweepPeriod = Duration.ofSeconds(60);
    private Duration retryInitial = Duration.ofMillis(500);
    private Duration retryMax = Duration.ofSeconds(30);
    private Duration healthRetry = Duration.ofSeconds(5);
    private FeatureGates gates = FeatureGates.defaults();

    private Builder(KubernetesClient client, String nodeName) {
      this.client = Objects.requireNonNull(client, "client");
      this.nodeName = Objects.requireNonNull(nodeName, "nodeName");
    }

    /**
     * Where the checkpoint file {@code dra_manager_state} and the device health {@code dra_health_state} are kept;
     * default {@code /var/lib/nodelet}.
     */
    public Builder stateDirectory(Path directory) {
      this.stateDirectory = Objects.requireNonNull(directory, "directory");
      return this;
    }

    /** The clock for retry times and health timeouts; default the system clock. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * The executor that runs all work (it must run one task at a time for the manager's guarantees); default a
     * daemon thread of the manager's own, ended by {@link #close()}. An executor passed here is not shut down.
     */
    public Builder executor(ScheduledExecutorService executor) {
      this.executor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /** How often claims of pods that are gone are looked for; the first sweep comes one period after the start. */
    public Builder sweepPeriod(Duration period) {
      this.sweepPeriod = positive(period, "sweepPeriod");
      return this;
    }

    /** The first and the longest delay before a failed step is tried again; default 500 ms and 30 s. */
    public Builder retry(Duration initial, Duration max) {
      this.retryInitial = positive(initial, "retry initial");
      this.retryMax = positive(max, "retry max");
      if (max.compareTo(initial) < 0) {
        throw new IllegalArgumentException("retry max " + max + " is below retry initial " + initial);
      }
      return this;
    }

    /** How long after a broken health stream it is watched again; default 5 s. */
    public Builder healthRetry(Duration delay) {
      this.healthRetry = positive(delay, "healthRetry");
      return this;
    }

    /**
     * Turns Kubernetes feature gates on or off; the defaults are those of Kubernetes 1.36:
     * {@code DRAExtendedResource} on (a pod's claim named in {@code status.extendedResourceClaimStatus} is prepared
     * and its containers get CDI IDs for it), {@code DRAWorkloadResourceClaims} off (a claim reserved for the pod's
     * PodGroup, {@code spec.schedulingGroup.podGroupName}, is refused naming the gate), and
     * {@code DRAOptionalNodeOperations} off (alpha in 1.37; a claim whose allocation results list
     * {@code skipNodeOperations} is refused naming the gate; on, a driver all of whose devices in a claim skip
     * {@code NodePrepareResources} or {@code NodeUnprepareResources} is neither looked up nor called for it).
     *
     * @throws IllegalArgumentException for a gate the claim manager does not know, naming the known ones
     * @since 2.1
     */
    public Builder featureGates(Map<String, Boolean> gates) {
      this.gates = this.gates.with(Objects.requireNonNull(gates, "gates"));
      return this;
    }

    public ClaimManager build() {
      return new ClaimManager(this);
    }

    private static Duration positive(Duration d, String what) {
      if (d == null || d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(what + " must be a positive duration, was " + d);
      }
      return d;
    }
  }

  /** Starts building a claim manager for the pods of {@code nodeName}. */
  public static Builder builder(KubernetesClient client, String nodeName) {
    return new Builder(client, nodeName);
  }

  private final ClaimReconciler work;

  private ClaimManager(Builder b) {
    this.work = new ClaimReconciler(new ManagerSettings(b.client, b.nodeName, b.stateDirectory, b.clock, b.executor,
        b.sweepPeriod, b.retryInitial, b.retryMax, b.healthRetry, b.gates, null));
  }

  /** Loads the checkpoint and starts the periodic sweep. Returns at once; the work runs on the executor. */
  public void start() {
    work.start();
  }

  /** A pod of this node was created or updated. */
  public void podUpdated(Pod pod) {
    work.podUpdated(pod);
  }

  /** A pod left this node. */
  public void podRemoved(Pod pod) {
    work.podRemoved(pod);
  }

  /** A driver that prepares claims; the newest registration of a name is the one called. */
  public void addDriver(ClaimPreparation driver) {
    work.addDriver(driver);
  }

  /** A driver registration went away; its claims stay prepared and wait for the driver to come back. */
  public void removeDriver(ClaimPreparation driver) {
    work.removeDriver(driver);
  }

  /** A driver that reports device health; the stream of the newest registration of a name is followed. */
  public void addHealthSource(DeviceHealthSource source) {
    work.addHealthSource(source);
  }

  /** A health source went away; with none of its name left, the driver's health is forgotten. */
  public void removeHealthSource(DeviceHealthSource source) {
    work.removeHealthSource(source);
  }

  /** Stops the work; the checkpoint stays, nothing is unprepared. */
  @Override
  public void close() {
    work.close();
  }

  /**
   * Forgets a claim by hand: drops it from the cache and the checkpoint without asking its drivers to unprepare it,
   * for a claim whose driver is gone for good (its unprepare would otherwise be retried forever and keep its pods
   * from being removed). Refused while an active pod uses the claim.
   *
   * @return completes with {@code true} once the checkpoint without the claim is on disk, {@code false} when the
   *     claim is not known; fails with {@link IllegalStateException} naming the pods that still use it, or when
   *     the manager is closed
   * @since 2.2
   */
  public CompletableFuture<Boolean> forgetClaim(String namespace, String name) {
    return work.forget(Objects.requireNonNull(namespace, "namespace"), Objects.requireNonNull(name, "name"));
  }

  /**
   * The claim manager's Prometheus metrics, as the OSGi component registers them: {@code nodelet_dra_claims} (claims
   * by state) and {@code nodelet_dra_device_health} (devices by driver and health), read from this manager when
   * collected. Register it with a registry of your own, e.g. {@code PrometheusRegistry.defaultRegistry.register(...)}.
   *
   * @since 2.2
   */
  public MultiCollector metrics() {
    return new ClaimsMetrics(this);
  }

  @Override
  public List<ClaimInfo> claims() {
    return work.claims();
  }

  @Override
  public List<DeviceHealthInfo> health() {
    return work.health();
  }

  @Override
  public Optional<String> checkpointProblem() {
    return work.checkpointProblem();
  }

  @Override
  public List<ContainerDevices> containers() {
    return work.containers();
  }
}
