package dev.nodelet.dra;

import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import java.util.List;
import java.util.Objects;

/**
 * One pool of devices of a driver on this node, published as one or more {@code resource.k8s.io/v1}
 * ResourceSlices with {@code spec.pool.name} = {@link #name()}.
 *
 * <p>The controller sets the slice-level fields ({@code driver}, {@code nodeName}, the pool generation and slice
 * count) and splits a pool into slices of at most 128 devices (64 when a device has taints or consumes counters)
 * and slices of at most 8 counter sets, since {@code resource.k8s.io/v1} does not allow devices and shared
 * counters in one slice. Devices are built with fabric8's {@code DeviceBuilder}; they must not set
 * {@code nodeName}, {@code nodeSelector} or {@code allNodes}, since every device of a Nodelet pool belongs to this
 * node. A device's {@code consumesCounters} names counter sets of the same pool.
 *
 * @param name the pool name: at most 253 characters, DNS subdomains separated by {@code /}; the node name is a
 *     good choice for a driver with one pool
 * @param devices the devices, with names that are DNS labels unique in the pool; the order does not matter
 * @param sharedCounters the counter sets that devices of this pool consume (partitionable devices), with names
 *     that are DNS labels unique in the pool; the order does not matter (since 1.3)
 */
public record Pool(String name, List<Device> devices, List<CounterSet> sharedCounters) {

  /** Copies the lists; rejects {@code null} so that a snapshot always has a definite shape. */
  public Pool {
    Objects.requireNonNull(name, "name");
    devices = List.copyOf(devices);
    sharedCounters = List.copyOf(sharedCounters);
  }

  /** A pool without shared counters (the constructor of API 1.2). */
  public Pool(String name, List<Device> devices) {
    this(name, devices, List.of());
  }
}
