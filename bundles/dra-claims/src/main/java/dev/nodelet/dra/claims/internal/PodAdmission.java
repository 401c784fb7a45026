package dev.nodelet.dra.claims.internal;

import dev.nodelet.dra.claims.internal.PodClaims.PodClaim;
import dev.nodelet.dra.claims.internal.PodClaims.PodClaimException;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The first step of preparing a pod: its claims read from the API server and checked (on the io executor, several
 * pods at a time), then recorded in the cache (on the claim manager's thread) when every one of them passed.
 */
final class PodAdmission {

  private final ClaimValidation validation;
  private final FeatureGates gates;
  private final Failures failures;

  PodAdmission(ClaimValidation validation, FeatureGates gates, Failures failures) {
    this.validation = validation;
    this.gates = gates;
    this.failures = failures;
  }

  /** On the io executor: every claim of the pod read and checked, before anything is recorded. */
  Validated validate(Pod pod) {
    List<Checked> checked = new ArrayList<>();
    try {
      for (PodClaim pc : PodClaims.of(pod, gates)) {
        checked.add(new Checked(pc, validation.check(pod, pc)));
      }
      return new Validated(pod, checked, null, null);
    } catch (PodClaimException e) {
      return new Validated(pod, List.of(), e, null);
    } catch (RuntimeException e) {
      return new Validated(pod, List.of(), null, e);
    }
  }

  /** A claim of a pod, read and checked. */
  record Checked(PodClaim claim, ClaimValidation.Valid valid) {
  }

  /** What reading a pod's claims gave: the checked claims, or the claim that cannot be used, or a bug. */
  record Validated(Pod pod, List<Checked> claims, PodClaimException error, RuntimeException unexpected) {
  }

  /**
   * A pod whose claims passed validation and are in the cache; {@code recorded}: the cache changed; {@code todo}:
   * the entries its drivers prepared.
   */
  record Admitted(Pod pod, List<ClaimEntry> entries,
      Map<String, List<DeviceRequestAllocationResult>> allocations, boolean recorded, List<ClaimEntry> todo) {
    Admitted with(List<ClaimEntry> prepared) {
      return new Admitted(pod, entries, allocations, recorded, prepared);
    }
  }

  /** Records the pod's checked claims in the cache; null (and a failure kept) if a cached entry forbids it. */
  Admitted admit(Validated v, Map<String, ClaimEntry> cache) {
    Pod pod = v.pod();
    String podUid = pod.getMetadata().getUid();
    String ns = pod.getMetadata().getNamespace();
    List<ClaimEntry> toUse = new ArrayList<>();
    Map<String, List<String>> allocationDrivers = new HashMap<>();
    Map<String, List<DeviceRequestAllocationResult>> allocations = new HashMap<>();
    Map<String, Map<String, java.util.Set<String>>> skips = new HashMap<>();
    try {
      for (Checked c : v.claims()) {
        PodClaim pc = c.claim();
        String key = ns + "/" + pc.name();
        ClaimEntry cached = cache.get(key);
        String claimUid = c.valid().claim().getMetadata().getUid();
        if (cached != null && !cached.uid.equals(claimUid)) {
          throw new PodClaimException(pc.name(), "ResourceClaim " + key + " was replaced (UID " + claimUid
              + ", prepared " + cached.uid + "); the old one must be unprepared first");
        }
        if (cached != null && cached.unpreparing) {
          throw new PodClaimException(pc.name(), "ResourceClaim " + key + " is being unprepared");
        }
        toUse.add(cached != null ? cached : new ClaimEntry(ns, pc.name(), claimUid));
        allocationDrivers.put(key, c.valid().drivers());
        allocations.put(key, c.valid().results());
        skips.put(key, c.valid().skips());
      }
    } catch (PodClaimException e) {
      failures.fail(ns, e.claimName, podUid, e.getMessage());
      return null;
    }
    boolean changed = false;
    for (ClaimEntry use : toUse) {
      if (cache.putIfAbsent(use.key(), use) == null) {
        allocationDrivers.get(use.key()).forEach(d -> use.drivers.putIfAbsent(d, List.of()));
        use.skips.putAll(skips.get(use.key()));
        changed = true;
      }
      changed |= use.podUids.add(podUid);
    }
    return new Admitted(pod, toUse, allocations, changed, List.of());
  }

}
