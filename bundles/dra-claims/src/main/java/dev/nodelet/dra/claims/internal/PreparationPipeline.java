package dev.nodelet.dra.claims.internal;

import dev.nodelet.dra.claims.internal.PodAdmission.Admitted;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Preparing the pods' claims, a pipeline advanced by each sync of the claim manager: a pod's claims are read on the io
 * executor (several pods at a time), recorded in the cache and then in the checkpoint before any driver call, prepared
 * by their drivers once that record is on disk, and shown prepared only once their devices are on disk. Each stage's
 * checkpoint write runs on the writer's executor, coalesced, while the claim manager's thread goes on; the end of a
 * read or write asks for a sync, which moves the pods on.
 *
 * <p>Everything but the reads and the write callbacks runs on the claim manager's thread, as the cache does.
 */
final class PreparationPipeline {

  // the claim manager's logger: the lines logged here are the claim manager's
  private static final Logger LOG = LoggerFactory.getLogger(ClaimReconciler.class);

  private final Map<String, Pod> activePods; // fed from any thread
  private final Map<String, ClaimEntry> cache; // the claim manager's thread only
  private final PodAdmission admission;
  private final PreparationStep step;
  private final Failures failures;
  private final CheckpointWriter writer;
  private final Supplier<CompletableFuture<Void>> writeCheckpoint;
  private final Executor io;
  private final Runnable requestSync;

  private final Queue<PodAdmission.Validated> read = new ConcurrentLinkedQueue<>(); // claims read by the io executor

  // the claim manager's thread only
  private final Map<String, String> preparedPods = new HashMap<>(); // pod UID -> resourceVersion prepared
  private final Map<String, Pod> inFlight = new HashMap<>(); // pod UID -> pod being read, recorded or prepared
  private final List<Stage> recording = new ArrayList<>(); // recorded, waiting for their checkpoint write
  private final List<Stage> reporting = new ArrayList<>(); // prepared, waiting for their checkpoint write

  /**
   * @param writeCheckpoint writes the whole cache; completes once it (or a newer write) is on disk
   * @param requestSync asks the claim manager for a sync, from any thread
   */
  PreparationPipeline(Map<String, Pod> activePods, Map<String, ClaimEntry> cache, PodAdmission admission,
      PreparationStep step, Failures failures, CheckpointWriter writer,
      Supplier<CompletableFuture<Void>> writeCheckpoint, Executor io, Runnable requestSync) {
    this.activePods = activePods;
    this.cache = cache;
    this.admission = admission;
    this.step = step;
    this.failures = failures;
    this.writer = writer;
    this.writeCheckpoint = writeCheckpoint;
    this.io = io;
    this.requestSync = requestSync;
  }

  /** One step of the sync: every pod moved on as far as it can go now, and the pods no longer active let go. */
  void advance(Instant now) {
    admitRead();
    startReads(now);
    prepareRecorded();
    reportPrepared();
    preparedPods.keySet().removeIf(uid -> !activePods.containsKey(uid));
  }

  /** True while a pod is being read, recorded or prepared: its end syncs again. */
  boolean busy() {
    return !inFlight.isEmpty();
  }

  /** Every pod due whose claims are not being read, recorded or prepared: its claims are read on the io executor. */
  private void startReads(Instant now) {
    List<Pod> pods = new ArrayList<>(activePods.values());
    pods.sort(Comparator.comparing(p -> p.getMetadata().getUid()));
    for (Pod pod : pods) {
      String uid = pod.getMetadata().getUid();
      if (!PodClaims.isActive(pod) || String.valueOf(pod.getMetadata().getResourceVersion()).equals(preparedPods.get(uid))
          || failures.podWaits(uid, now) || inFlight.containsKey(uid)) {
        continue;
      }
      inFlight.put(uid, pod);
      try {
        io.execute(() -> {
          read.add(admission.validate(pod));
          requestSync.run();
        });
      } catch (RejectedExecutionException e) {
        inFlight.remove(uid); // closed
      }
    }
  }

  /** The pods whose claims were read: recorded in the cache, then in the checkpoint before any driver call. */
  private void admitRead() {
    List<Admitted> admitted = new ArrayList<>();
    boolean recorded = false;
    for (PodAdmission.Validated v; (v = read.poll()) != null; ) {
      String uid = v.pod().getMetadata().getUid();
      Pod current = activePods.get(uid);
      Admitted a = null;
      if (current == null || !PodClaims.isActive(current)) {
        LOG.debug("Pod {} is no longer active; its claims are not prepared", uid);
      } else if (v.unexpected() != null) {
        LOG.error("Checking the claims of pod {} failed; they are checked again at the next change", uid,
            v.unexpected());
      } else if (v.error() != null) {
        failures.fail(v.pod().getMetadata().getNamespace(), v.error().claimName, uid, v.error().getMessage());
      } else {
        a = admission.admit(v, cache);
      }
      if (a == null) {
        inFlight.remove(uid);
      } else {
        admitted.add(a);
        recorded |= a.recorded();
      }
    }
    if (!admitted.isEmpty()) { // pods are recorded on disk before any driver call
      recording.add(stage(admitted, recorded || writer.failed() ? writeCheckpoint.get() : writer.durable()));
    }
  }

  /** The pods whose record is on disk: their drivers are called, and the devices written. */
  private void prepareRecorded() {
    List<Admitted> prepared = new ArrayList<>();
    boolean changed = false;
    for (Stage stage : done(recording)) {
      for (Admitted a : stage.pods()) {
        String uid = a.pod().getMetadata().getUid();
        if (!stillWanted(a)) {
          inFlight.remove(uid);
        } else if (stage.error() != null) {
          a.entries().forEach(e -> failures.fail(e.namespace, e.name, uid, "writing the checkpoint failed ("
              + stage.error() + "); the claim is prepared once it can be written"));
          inFlight.remove(uid);
        } else {
          boolean started = PodClaims.started(a.pod());
          // the kubelet's rule: an entry loaded from the checkpoint is prepared again when a pod starts with it;
          // a pod that was already running keeps the devices from disk
          List<ClaimEntry> todo = a.entries().stream()
              .filter(e -> !e.prepared && !(started && e.restoredPods.contains(uid))).toList();
          if (step.prepare(uid, todo, a.allocations())) {
            prepared.add(a.with(todo));
            changed |= !todo.isEmpty();
          } else {
            inFlight.remove(uid);
          }
        }
      }
    }
    if (!prepared.isEmpty()) {
      reporting.add(stage(prepared, changed ? writeCheckpoint.get() : writer.durable()));
    }
  }

  /** The pods whose devices are on disk: now, and not before, their claims show as prepared. */
  private void reportPrepared() {
    for (Stage stage : done(reporting)) {
      for (Admitted a : stage.pods()) {
        String uid = a.pod().getMetadata().getUid();
        inFlight.remove(uid);
        if (stage.error() != null) {
          a.todo().forEach(e -> {
            e.prepared = false; // prepared again (drivers are idempotent) and written at the retry
            e.unsaved = false;
            failures.fail(e.namespace, e.name, uid, "writing the checkpoint failed (" + stage.error()
                + "); the claim is prepared again once it can be written");
          });
          continue;
        }
        a.todo().forEach(e -> e.unsaved = false);
        a.entries().forEach(e -> failures.clear(e.key()));
        a.todo().forEach(e -> LOG.info("Prepared ResourceClaim {} for pod {}/{}: {}", e.key(),
            a.pod().getMetadata().getNamespace(), a.pod().getMetadata().getName(), e.drivers.keySet()));
        preparedPods.put(uid, String.valueOf(a.pod().getMetadata().getResourceVersion()));
        failures.podDone(uid);
        failures.clearIf(f -> uid.equals(f.podUid()) && !cache.containsKey(f.key()));
      }
    }
  }

  /** The pod is still active and its entries are still the cache's, not being unprepared. */
  private boolean stillWanted(Admitted a) {
    Pod current = activePods.get(a.pod().getMetadata().getUid());
    return current != null && PodClaims.isActive(current)
        && a.entries().stream().allMatch(e -> cache.get(e.key()) == e && !e.unpreparing);
  }

  /** Pods that wait for this write; a sync follows its end. */
  private Stage stage(List<Admitted> pods, CompletableFuture<Void> written) {
    written.whenComplete((ok, e) -> requestSync.run());
    return new Stage(pods, written);
  }

  /** Removes and returns the stages whose checkpoint write has finished. */
  private static List<Stage> done(List<Stage> stages) {
    List<Stage> out = new ArrayList<>();
    for (Iterator<Stage> it = stages.iterator(); it.hasNext(); ) {
      Stage stage = it.next();
      if (stage.written().isDone()) {
        it.remove();
        out.add(stage);
      }
    }
    return out;
  }

  /** Pods waiting for a checkpoint write; {@code error()} once it failed. */
  private record Stage(List<Admitted> pods, CompletableFuture<Void> written) {
    String error() {
      if (!written.isCompletedExceptionally()) {
        return null;
      }
      try {
        written.join();
        return null;
      } catch (CompletionException | java.util.concurrent.CancellationException e) {
        Throwable cause = e.getCause() == null ? e : e.getCause();
        return cause.getMessage();
      }
    }
  }
}
