package dev.nodelet.dra.claims.internal;

import dev.nodelet.dra.ClaimRef;
import dev.nodelet.dra.PreparedDevice;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One claim in the claim manager's cache and checkpoint: the pods of this node that use it and the devices each
 * driver prepared. Touched by the claim manager's thread only.
 */
public final class ClaimEntry {

  public final String namespace;
  public final String name;
  public final String uid;
  public final Set<String> podUids = new TreeSet<>();
  /** Devices per driver; a driver of the allocation that has not prepared yet has an empty list. */
  public final Map<String, List<PreparedDevice>> drivers = new TreeMap<>();
  /**
   * Per driver, the node operations ({@code NodePrepareResources}, {@code NodeUnprepareResources}) that all its
   * allocated devices skip (DRAOptionalNodeOperations); kept in the checkpoint, so unprepare honours it whatever the
   * gate says later.
   */
  public final Map<String, Set<String>> skips = new TreeMap<>();
  /**
   * Every driver prepared the claim in this run. Memory only, as in the kubelet: after a restart the next start of
   * a pod prepares the claim again (drivers are idempotent), which also recreates CDI specs a reboot wiped.
   */
  public boolean prepared;
  /**
   * Prepared, but the checkpoint write that holds its devices has not reached the disk yet: not reported as
   * prepared until it has. Memory only.
   */
  public boolean unsaved;
  /** The pods the checkpoint listed at start: while running they keep the devices from disk. Memory only. */
  public final Set<String> restoredPods = new HashSet<>();
  /** The last pod is gone: new pods are refused until the drivers unprepared it. Memory only. */
  public boolean unpreparing;
  /**
   * Where the checkpoint read held {@code null} instead of an empty list or map ({@code PodUIDs},
   * {@code DriverState}, {@code DriverState/<driver>/Devices}, {@code DriverState/<driver>/<i>/RequestNames} or
   * {@code .../CDIDeviceIDs}), so that an unchanged entry is written back as it was read.
   */
  public final Set<String> nulls = new HashSet<>();

  public ClaimEntry(String namespace, String name, String uid) {
    this.namespace = namespace;
    this.name = name;
    this.uid = uid;
  }

  public String key() {
    return namespace + "/" + name;
  }

  /** The driver is neither looked up nor called for this operation. */
  public boolean skips(String driver, String operation) {
    return skips.getOrDefault(driver, Set.of()).contains(operation);
  }

  public ClaimRef ref() {
    return new ClaimRef(namespace, name, uid);
  }

  /** The devices of a driver, replaced by what it prepared now; its nulls from the checkpoint no longer hold. */
  public void replaceDevices(String driver, List<PreparedDevice> devices) {
    drivers.put(driver, devices);
    nulls.removeIf(path -> path.startsWith("DriverState/" + driver + "/"));
    nulls.remove("DriverState");
  }

  /** The devices came from a driver in this run, or from disk for running pods. */
  public boolean usable() {
    return prepared && !unsaved || !restoredPods.isEmpty();
  }
}
