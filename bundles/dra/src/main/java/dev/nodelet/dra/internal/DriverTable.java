package dev.nodelet.dra.internal;

import dev.nodelet.controller.Scheduler;
import dev.nodelet.controller.StreamMonitor;
import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.SelfPublishedSlices;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What the node resources controller knows of each driver name: the registrations, the monitored one, the drivers in
 * their grace period, the ones that publish their own slices and the refused services. Every field is guarded by the
 * table itself ({@code synchronized (table)}).
 */
final class DriverTable {

  /** The monitored registration of a driver and its last valid snapshot ({@code null} until the first one). */
  static final class Active {
    final DeviceSnapshots driver;
    final StreamMonitor monitor;
    List<Pool> pools;
    Instant lastSnapshot; // when the last valid snapshot came, for the status only
    String lastError; // the last stream or data error since then, for the status only
    List<Pool> refused; // the pools whose slices the server stored without gated fields: not written again

    Active(DeviceSnapshots driver, StreamMonitor monitor) {
      this.driver = driver;
      this.monitor = monitor;
    }
  }

  /** A driver service whose name the API would not accept; it is never monitored. */
  record Rejected(String name, String error) {
  }

  /**
   * A driver that went away: its slices stay until the deadline, when the timer enqueues it. Then the slices the
   * controller wrote are deleted, and for a driver that published its own ({@code wipe}) all of them, as the kubelet
   * wipes the slices of a plugin that is gone.
   */
  record Leaving(long deadline, Scheduler.Task timer, Instant lastSnapshot, String lastError, boolean wipe) {
  }

  final Map<String, List<DeviceSnapshots>> registered = new HashMap<>(); // newest last
  final Map<String, Active> active = new HashMap<>();
  final Map<String, Leaving> leaving = new HashMap<>();
  /** Drivers that write their own slices, with their registrations (newest last). */
  final Map<String, List<SelfPublishedSlices>> selfPublishing = new HashMap<>();
  final Map<String, String> errors = new HashMap<>();
  /** Driver services refused for their name, shown in the status until they go away. */
  final Map<Object, Rejected> rejected = new IdentityHashMap<>();
  boolean closed;
  long startupDeadline;

  /**
   * The status of each driver at {@code now}: the registered ones, those in their grace period after going away,
   * and those with slices in the cache ({@code stored}) that have not registered since the start (their start-up
   * grace period); ordered by name. The caller holds the table's lock.
   */
  List<DriverStatus> statuses(List<String> stored, long now) {
    Map<String, DriverStatus> statuses = new TreeMap<>();
    selfPublishing.keySet().forEach(name -> statuses.put(name, new DriverStatus(name,
        DriverStatus.State.SELF_PUBLISHING, Optional.empty(), Optional.empty(), Duration.ZERO, Duration.ZERO)));
    active.forEach((name, a) -> statuses.put(name, new DriverStatus(name, state(a.monitor),
        Optional.ofNullable(a.lastSnapshot), Optional.ofNullable(a.lastError), a.monitor.backoff(),
        Duration.ZERO)));
    leaving.forEach((name, l) -> statuses.put(name, new DriverStatus(name, DriverStatus.State.LEAVING,
        Optional.ofNullable(l.lastSnapshot()), Optional.ofNullable(l.lastError()), Duration.ZERO,
        left(Math.max(startupDeadline, l.deadline()), now))));
    // a refused name may equal a valid one only if the driver's answer changed: the monitored one wins
    rejected.values().forEach(r -> statuses.putIfAbsent(r.name(), new DriverStatus(r.name(),
        DriverStatus.State.STOPPED, Optional.empty(), Optional.of(r.error()), Duration.ZERO, Duration.ZERO)));
    for (String name : stored) {
      if (!name.isEmpty() && !statuses.containsKey(name)) {
        statuses.put(name, new DriverStatus(name, DriverStatus.State.LEAVING, Optional.empty(),
            Optional.empty(), Duration.ZERO, left(startupDeadline, now)));
      }
    }
    return List.copyOf(statuses.values());
  }

  private static DriverStatus.State state(StreamMonitor monitor) {
    return switch (monitor.state()) {
      case FOLLOWING -> DriverStatus.State.MONITORING;
      case BACKING_OFF -> DriverStatus.State.BACKING_OFF;
      case STOPPED -> DriverStatus.State.STOPPED;
    };
  }

  private static Duration left(long deadline, long now) {
    return Duration.ofNanos(Math.max(0, deadline - now));
  }
}
