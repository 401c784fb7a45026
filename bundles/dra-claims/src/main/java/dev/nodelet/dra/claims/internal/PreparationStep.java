package dev.nodelet.dra.claims.internal;

import dev.nodelet.dra.ClaimRef;
import dev.nodelet.dra.ClaimPreparation;
import dev.nodelet.dra.PrepareResult;
import dev.nodelet.dra.PreparedDevice;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The driver calls: one {@code prepare} per driver (in name order) with every claim that needs it, and one
 * {@code unprepare} per driver with every claim that no pod uses. Failures are kept in {@link Failures}.
 */
final class PreparationStep {

  private final Drivers drivers;
  private final Failures failures;

  PreparationStep(Drivers drivers, Failures failures) {
    this.drivers = drivers;
    this.failures = failures;
  }

  /**
   * Prepares the claims of one pod; devices are recorded only when every driver succeeded, and the claims stay
   * {@link ClaimEntry#unsaved} until the checkpoint holding them is on disk.
   *
   * @param allocations the allocation results per claim key, as validated
   * @return true when every claim is prepared
   */
  boolean prepare(String podUid, List<ClaimEntry> claims, Map<String, List<DeviceRequestAllocationResult>> allocations) {
    if (claims.isEmpty()) {
      return true;
    }
    Set<String> driverNames = new TreeSet<>();
    claims.forEach(e -> driverNames.addAll(e.drivers.keySet()));
    Map<String, Map<String, List<PreparedDevice>>> results = new HashMap<>(); // claim UID -> driver -> devices
    for (String driverName : driverNames) {
      // a driver whose devices all skip NodePrepareResources is neither looked up nor called: the claim keeps its
      // allocated devices, without CDI IDs
      claims.stream().filter(e -> e.drivers.containsKey(driverName) && e.skips(driverName, NodeOperations.PREPARE))
          .forEach(e -> results.computeIfAbsent(e.uid, k -> new TreeMap<>()).put(driverName,
              allocations.getOrDefault(e.key(), List.of()).stream().filter(r -> driverName.equals(r.getDriver()))
                  .map(r -> new PreparedDevice(List.of(r.getRequest()), r.getPool(), r.getDevice(), List.of(), null))
                  .toList()));
      List<ClaimEntry> batch = claims.stream().filter(e -> e.drivers.containsKey(driverName)
          && !e.skips(driverName, NodeOperations.PREPARE)).toList();
      if (batch.isEmpty()) {
        continue;
      }
      Map<String, ClaimEntry> byUid = new LinkedHashMap<>();
      batch.forEach(e -> byUid.putIfAbsent(e.uid, e));
      ClaimPreparation driver = drivers.preparing(driverName);
      if (driver == null) {
        batch.forEach(e -> failures.fail(e.namespace, e.name, podUid, "DRA driver " + driverName
            + " is not registered or does not prepare claims"));
        return false;
      }
      Map<String, PrepareResult> answer;
      try {
        answer = driver.prepare(byUid.values().stream().map(e -> new ClaimRef(e.namespace, e.name, e.uid,
            allocations.getOrDefault(e.key(), List.of()).stream()
                .filter(r -> driverName.equals(r.getDriver())).toList())).toList());
      } catch (RuntimeException e) {
        String why = "preparing with DRA driver " + driverName + " failed: " + e.getMessage();
        batch.forEach(c -> failures.fail(c.namespace, c.name, podUid, why));
        return false;
      }
      boolean ok = true;
      for (ClaimEntry e : byUid.values()) {
        PrepareResult r = answer == null ? null : answer.get(e.uid);
        if (r == null || !r.ok()) {
          ok = false;
          failures.fail(e.namespace, e.name, podUid, "DRA driver " + driverName + " did not prepare the claim: "
              + (r == null ? "no result for claim UID " + e.uid : r.error()));
        } else {
          results.computeIfAbsent(e.uid, k -> new TreeMap<>()).put(driverName, r.devices());
        }
      }
      if (answer != null && answer.keySet().stream().anyMatch(uid -> !byUid.containsKey(uid))) {
        ok = false;
        batch.forEach(c -> failures.fail(c.namespace, c.name, podUid, "DRA driver " + driverName
            + " answered for a claim it was not asked about"));
      }
      if (!ok) {
        return false;
      }
    }
    for (ClaimEntry e : claims) {
      results.getOrDefault(e.uid, Map.of()).forEach(e::replaceDevices); // replaces that driver's devices
      e.prepared = true;
      e.unsaved = true; // reported once the checkpoint holding the devices is on disk
      failures.clear(e.key());
    }
    return true;
  }

  /** Unprepares the claims with each of their drivers; returns the keys of those that failed. */
  Set<String> unprepare(List<ClaimEntry> claims) {
    Set<String> failed = new HashSet<>();
    Set<String> driverNames = new TreeSet<>();
    claims.forEach(e -> driverNames.addAll(e.drivers.keySet()));
    for (String driverName : driverNames) {
      List<ClaimEntry> batch = claims.stream().filter(e -> e.drivers.containsKey(driverName)
          && !e.skips(driverName, NodeOperations.UNPREPARE) && !failed.contains(e.key())).toList();
      if (batch.isEmpty()) {
        continue;
      }
      ClaimPreparation driver = drivers.preparing(driverName);
      if (driver == null) {
        batch.forEach(e -> {
          failed.add(e.key());
          failures.fail(e.namespace, e.name, null, "DRA driver " + driverName + " is not registered; the claim is"
              + " unprepared when it returns");
        });
        continue;
      }
      try {
        Map<String, String> errors = driver.unprepare(batch.stream().map(ClaimEntry::ref).toList());
        for (ClaimEntry e : batch) {
          String error = errors == null ? null : errors.get(e.uid);
          if (error != null) {
            failed.add(e.key());
            failures.fail(e.namespace, e.name, null, "DRA driver " + driverName + " did not unprepare the claim: "
                + error);
          }
        }
      } catch (RuntimeException ex) {
        batch.forEach(e -> {
          failed.add(e.key());
          failures.fail(e.namespace, e.name, null, "unpreparing with DRA driver " + driverName + " failed: "
              + ex.getMessage());
        });
      }
    }
    return failed;
  }
}
