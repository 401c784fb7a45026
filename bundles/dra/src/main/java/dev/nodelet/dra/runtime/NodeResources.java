package dev.nodelet.dra.runtime;

import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.SelfPublishedSlices;
import dev.nodelet.dra.SliceSummary;
import dev.nodelet.dra.internal.NodeResourcesController;
import dev.nodelet.kube.watch.Reflectors;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

/**
 * The DRA node controller without OSGi: publishes the devices of the drivers added to it as this node's
 * ResourceSlices, as the {@code nodelet-dra} bundle does for {@link DeviceSnapshots} services.
 *
 * <pre>{@code
 * ManualScheduler time = new ManualScheduler();
 * try (NodeResources resources = NodeResources.builder(client, "node-a").scheduler(time).build()) {
 *   resources.start();
 *   resources.addDriver(myDriver);
 *   time.advance(Duration.ofSeconds(1)); // retries, rate limits and grace periods move with it
 *   resources.slices();
 * }
 * }</pre>
 */
public final class NodeResources implements AutoCloseable {

  private final NodeResourcesController controller;

  private NodeResources(NodeResourcesController controller) {
    this.controller = controller;
  }

  /** A controller for {@code nodeName}'s slices, written with {@code client}. */
  public static Builder builder(KubernetesClient client, String nodeName) {
    return new Builder(NodeResourcesController.builder(client, nodeName));
  }

  /** Starts the reflector on this node's slices and the worker; returns at once. */
  public void start() {
    controller.start();
  }

  /** A driver to publish; a second driver of the same name takes over when the first is removed. */
  public void addDriver(DeviceSnapshots driver) {
    controller.addDriver(driver);
  }

  /** The driver went away: its slices stay for the grace period unless another driver of its name comes. */
  public void removeDriver(DeviceSnapshots driver) {
    controller.removeDriver(driver);
  }

  /** A driver that writes its own slices of this node: they are left alone while it is registered. */
  public void addSelfPublished(SelfPublishedSlices driver) {
    controller.addSelfPublished(driver);
  }

  /** The driver that wrote its own slices went away: they are deleted after the grace period unless it returns. */
  public void removeSelfPublished(SelfPublishedSlices driver) {
    controller.removeSelfPublished(driver);
  }

  /** The last error of a driver's data or publishing, if any. */
  public Optional<String> driverError(String driverName) {
    return controller.driverError(driverName);
  }

  public String nodeName() {
    return controller.nodeName();
  }

  /** What the controller knows of each driver now. */
  public List<DriverStatus> driverStatuses() {
    return controller.driverStatuses();
  }

  /** This node's slices as the reflector sees them. */
  public List<SliceSummary> slices() {
    return controller.slices();
  }

  /** Stops the reflector, the monitors and the worker; the published slices stay. */
  @Override
  public void close() {
    controller.close();
  }

  /** Configures {@link NodeResources}. */
  public static final class Builder {
    private final NodeResourcesController.Builder builder;

    private Builder(NodeResourcesController.Builder builder) {
      this.builder = builder;
    }

    /**
     * The list/watch machinery to watch this node's slices with (the {@code Reflectors} service in OSGi); without
     * it the controller runs its own on the client.
     *
     * @since 1.1
     */
    public Builder reflectors(Reflectors reflectors) {
      builder.reflectors(reflectors);
      return this;
    }

    /** The UID of this node's Node object, for the owner reference of new slices; asked at every create. */
    public Builder nodeUid(Supplier<Optional<String>> nodeUid) {
      builder.nodeUid(nodeUid);
      return this;
    }

    /** Time and delayed tasks ({@link ManualScheduler} in tests); default a thread of its own. */
    public Builder scheduler(Scheduler scheduler) {
      builder.scheduler(scheduler);
      return this;
    }

    public Builder options(ControllerOptions options) {
      builder.options(options);
      return this;
    }

    /** The jitter source of the monitor backoff. */
    public Builder random(DoubleSupplier random) {
      builder.random(random);
      return this;
    }

    /** Wall-clock time, for the times shown in the status. */
    public Builder clock(Clock clock) {
      builder.clock(clock);
      return this;
    }

    public NodeResources build() {
      return new NodeResources(builder.build());
    }
  }
}
