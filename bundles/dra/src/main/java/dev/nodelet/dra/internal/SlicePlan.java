package dev.nodelet.dra.internal;

import dev.nodelet.dra.runtime.ControllerOptions;
import dev.nodelet.dra.Pool;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaintBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpecBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

/**
 * The writes that turn the stored slices of one driver into the desired ones, computed without I/O.
 *
 * <p>Desired slices: each pool, devices sorted by name, cut into slices of at most {@code maxDevices} (64 when a
 * device has taints or consumes counters), then its counter sets sorted by name in slices of at most 8 of their
 * own, since v1 forbids devices and shared counters in one slice; a pool with neither is one empty slice. A pool keeps the generation of its newest stored
 * slices when those are exactly the desired ones; otherwise every slice of the pool is written with the next
 * generation, so consumers see a pool change as one step. Then the kubelet's matching: a stored slice equal to a
 * desired one is kept, an obsolete one is updated to hold a desired slice, what is still missing is created, and
 * the obsolete slices left over are deleted.
 *
 * @param updates stored slices with their new spec (metadata and resourceVersion as stored)
 * @param creates specs of the slices to create
 * @param deletes stored slices to delete
 */
record SlicePlan(List<ResourceSlice> updates, List<ResourceSliceSpec> creates, List<ResourceSlice> deletes) {

  static final int MAX_DEVICES_PER_SLICE = ControllerOptions.MAX_DEVICES_PER_SLICE;
  static final int MAX_DEVICES_PER_SLICE_WITH_TAINTS = 64;
  static final int MAX_COUNTER_SETS_PER_SLICE = 8;

  boolean isEmpty() {
    return updates.isEmpty() && creates.isEmpty() && deletes.isEmpty();
  }

  /**
   * @param serialization normalises the desired specs into the shape the API returns, so equal content compares
   *     equal
   */
  static SlicePlan of(String driver, String nodeName, List<Pool> pools, List<ResourceSlice> stored, int maxDevices,
      KubernetesSerialization serialization) {
    Map<String, List<ResourceSlice>> storedByPool = stored.stream()
        .collect(Collectors.groupingBy(s -> poolName(s.getSpec())));
    List<ResourceSliceSpec> desired = new ArrayList<>();
    pools.stream().sorted(Comparator.comparing(Pool::name)).forEach(pool -> {
      List<ResourceSlice> existing = storedByPool.getOrDefault(pool.name(), List.of());
      List<Content> chunks = chunks(withStoredTaintTimes(withWholeSecondTaintTimes(pool.devices()), existing),
          pool.sharedCounters(),
          maxDevices);
      long newest = existing.stream().mapToLong(s -> generation(s.getSpec())).max().orElse(0);
      List<ResourceSliceSpec> kept = specs(driver, nodeName, pool.name(), newest, chunks, serialization::clone);
      List<ResourceSliceSpec> newestStored = existing.stream().map(ResourceSlice::getSpec)
          .filter(spec -> generation(spec) == newest).toList();
      desired.addAll(sameElements(kept, newestStored) ? kept
          : specs(driver, nodeName, pool.name(), newest + 1, chunks, serialization::clone));
    });

    List<ResourceSliceSpec> missing = new ArrayList<>(desired);
    LinkedList<ResourceSlice> obsolete = new LinkedList<>();
    for (ResourceSlice slice : stored) {
      if (!missing.remove(slice.getSpec())) {
        obsolete.add(slice);
      }
    }
    List<ResourceSlice> updates = new ArrayList<>();
    List<ResourceSliceSpec> creates = new ArrayList<>();
    for (ResourceSliceSpec spec : missing) {
      if (obsolete.isEmpty()) {
        creates.add(spec);
      } else {
        updates.add(new ResourceSliceBuilder(obsolete.removeLast()).withSpec(spec).build());
      }
    }
    return new SlicePlan(updates, creates, List.copyOf(obsolete));
  }

  /**
   * The API server stores {@code timeAdded} to the second (metav1.Time): a driver's sub-second time is truncated as
   * the server would, or desired and stored slices would differ on every sync.
   */
  static List<Device> withWholeSecondTaintTimes(List<Device> devices) {
    if (devices.stream().allMatch(d -> d.getTaints() == null
        || d.getTaints().stream().allMatch(t -> Objects.equals(wholeSeconds(t.getTimeAdded()), t.getTimeAdded())))) {
      return devices;
    }
    return devices.stream().map(device -> device.getTaints() == null ? device
        : new DeviceBuilder(device).withTaints(device.getTaints().stream()
            .map(t -> Objects.equals(wholeSeconds(t.getTimeAdded()), t.getTimeAdded()) ? t
                : new DeviceTaintBuilder(t).withTimeAdded(wholeSeconds(t.getTimeAdded())).build())
            .toList()).build()).toList();
  }

  /** RFC 3339 in UTC to the second, as the API server writes it; what does not parse is left to validation. */
  static String wholeSeconds(String time) {
    if (time == null) {
      return null;
    }
    try {
      return OffsetDateTime.parse(time).toInstant().truncatedTo(ChronoUnit.SECONDS).toString();
    } catch (DateTimeParseException e) {
      return time;
    }
  }

  /**
   * The API server sets {@code timeAdded} on a taint that has none: a desired taint without one takes the time of
   * the same stored taint, or desired and stored slices would never compare equal.
   */
  private static List<Device> withStoredTaintTimes(List<Device> devices, List<ResourceSlice> stored) {
    Map<String, String> times = new java.util.HashMap<>();
    for (ResourceSlice slice : stored) {
      for (Device device : Objects.requireNonNullElse(slice.getSpec().getDevices(), List.<Device>of())) {
        for (DeviceTaint taint : Objects.requireNonNullElse(device.getTaints(), List.<DeviceTaint>of())) {
          if (taint.getTimeAdded() != null) {
            times.put(taintKey(device, taint), taint.getTimeAdded());
          }
        }
      }
    }
    if (times.isEmpty()) {
      return devices;
    }
    return devices.stream().map(device -> device.getTaints() == null
        || device.getTaints().stream().allMatch(t -> t.getTimeAdded() != null) ? device
        : new DeviceBuilder(device).withTaints(device.getTaints().stream()
            .map(t -> t.getTimeAdded() != null || !times.containsKey(taintKey(device, t)) ? t
                : new DeviceTaintBuilder(t).withTimeAdded(times.get(taintKey(device, t))).build())
            .toList()).build()).toList();
  }

  private static String taintKey(Device device, DeviceTaint taint) {
    return device.getName() + "\u0000" + taint.getKey() + "\u0000" + taint.getValue() + "\u0000" + taint.getEffect();
  }

  /** What one slice holds: devices or counter sets, never both. */
  private record Content(List<Device> devices, List<CounterSet> sharedCounters) {
  }

  private static List<Content> chunks(List<Device> devices, List<CounterSet> counterSets, int maxDevices) {
    boolean advanced = devices.stream().anyMatch(d -> d.getTaints() != null && !d.getTaints().isEmpty()
        || d.getConsumesCounters() != null && !d.getConsumesCounters().isEmpty());
    int size = advanced ? Math.min(maxDevices, MAX_DEVICES_PER_SLICE_WITH_TAINTS) : maxDevices;
    List<Device> sorted = devices.stream().sorted(Comparator.comparing(Device::getName)).toList();
    List<Content> chunks = new ArrayList<>();
    for (int i = 0; i < sorted.size(); i += size) {
      chunks.add(new Content(sorted.subList(i, Math.min(sorted.size(), i + size)), List.of()));
    }
    List<CounterSet> sets = counterSets.stream().sorted(Comparator.comparing(CounterSet::getName)).toList();
    for (int i = 0; i < sets.size(); i += MAX_COUNTER_SETS_PER_SLICE) {
      chunks.add(new Content(List.of(), sets.subList(i, Math.min(sets.size(), i + MAX_COUNTER_SETS_PER_SLICE))));
    }
    return chunks.isEmpty() ? List.of(new Content(List.of(), List.of())) : chunks;
  }

  private static List<ResourceSliceSpec> specs(String driver, String nodeName, String pool, long generation,
      List<Content> chunks, UnaryOperator<ResourceSliceSpec> normalise) {
    return chunks.stream().map(content -> normalise.apply(new ResourceSliceSpecBuilder()
        .withDriver(driver)
        .withNodeName(nodeName)
        .withNewPool().withName(pool).withGeneration(generation).withResourceSliceCount((long) chunks.size())
        .endPool()
        .withDevices(content.devices())
        .withSharedCounters(content.sharedCounters().isEmpty() ? null : content.sharedCounters())
        .build())).toList();
  }

  /** Equal as multisets. */
  private static boolean sameElements(List<ResourceSliceSpec> a, List<ResourceSliceSpec> b) {
    List<ResourceSliceSpec> rest = new ArrayList<>(b);
    return a.size() == b.size() && a.stream().allMatch(rest::remove);
  }

  private static String poolName(ResourceSliceSpec spec) {
    return spec == null || spec.getPool() == null ? "" : Objects.requireNonNullElse(spec.getPool().getName(), "");
  }

  private static long generation(ResourceSliceSpec spec) {
    return spec == null || spec.getPool() == null || spec.getPool().getGeneration() == null ? 0
        : spec.getPool().getGeneration();
  }
}
