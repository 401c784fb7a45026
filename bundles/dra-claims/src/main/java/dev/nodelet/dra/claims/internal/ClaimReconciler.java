package dev.nodelet.dra.claims.internal;

import dev.nodelet.controller.ExecutorScheduler;
import dev.nodelet.dra.DraDriver;
import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ContainerDevices;
import dev.nodelet.dra.claims.DeviceHealthInfo;
import dev.nodelet.dra.claims.internal.PodClaims.PodClaim;
import dev.nodelet.dra.claims.internal.PodClaims.PodClaimException;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The claim manager's work, one task at a time on its executor: load the checkpoint, then per pod sync validate and
 * record the pod's claims (checkpoint written before any driver call), prepare them, and unprepare the claims no
 * active pod uses. The state lives on the executor's thread; pods and drivers are fed from any thread.
 */
public final class ClaimReconciler implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ClaimReconciler.class);

  private final String nodeName;
  private final ScheduledExecutorService executor;
  private final boolean ownExecutor;
  private final Duration sweepPeriod;
  private final FeatureGates gates;
  private final Checkpoint checkpoint;
  private final HealthTracker health;
  private final PodHealthStatus podHealth;
  private final WakeUps wakeUps;
  private final Drivers drivers;
  private final Failures failures;
  private final ClaimValidation validation;
  private final PreparationStep step;
  private final java.time.Clock clock;

  // fed from any thread
  private final Map<String, Pod> activePods = new ConcurrentHashMap<>();
  private final Set<String> removedPods = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean syncQueued = new AtomicBoolean();

  // the executor's thread only
  private final Map<String, ClaimEntry> cache = new TreeMap<>();
  private final Map<String, String> preparedPods = new HashMap<>(); // pod UID -> resourceVersion prepared
  private boolean swept;
  private volatile boolean loaded;

  private final Object lifecycle = new Object();
  private ScheduledFuture<?> sweeper; // guarded by lifecycle
  private boolean closed; // guarded by lifecycle
  private volatile List<ClaimInfo> claimView = List.of();
  private volatile String checkpointProblem;

  public ClaimReconciler(ManagerSettings s) {
    this.nodeName = s.nodeName();
    this.clock = s.clock();
    this.ownExecutor = s.executor() == null;
    this.executor = ownExecutor ? Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "nodelet-dra-claims");
      t.setDaemon(true);
      return t;
    }) : s.executor();
    this.sweepPeriod = s.sweepPeriod();
    this.gates = s.gates();
    this.checkpoint = new Checkpoint(s.stateDirectory(), clock);
    this.health = new HealthTracker(clock, ExecutorScheduler.on(executor, "the DRA claim manager"), s.healthRetry(),
        new HealthState(s.stateDirectory()), this::requestSync);
    this.podHealth = new PodHealthStatus(s.client(), health);
    this.wakeUps = new WakeUps(clock, executor, guarded(this::requestSync));
    this.drivers = new Drivers(health);
    this.failures = new Failures(clock, s.retryInitial(), s.retryMax());
    this.validation = new ClaimValidation(s.client(), drivers, gates);
    this.step = new PreparationStep(drivers, failures);
  }

  public void start() {
    synchronized (lifecycle) {
      if (closed) {
        throw new IllegalStateException("the claim manager of node " + nodeName + " is closed");
      }
      executor.execute(guarded(this::load));
      sweeper = executor.scheduleWithFixedDelay(guarded(this::sweep), sweepPeriod.toMillis(),
          sweepPeriod.toMillis(), TimeUnit.MILLISECONDS);
    }
    LOG.info("DRA claim manager started for node {} (checkpoint {}, feature gates {})", nodeName,
        checkpoint.file(), gates);
  }

  public void podUpdated(Pod pod) {
    String uid = pod.getMetadata().getUid();
    removedPods.remove(uid);
    activePods.put(uid, pod);
    requestSync();
  }

  public void podRemoved(Pod pod) {
    String uid = pod.getMetadata().getUid();
    activePods.remove(uid);
    removedPods.add(uid);
    requestSync();
  }

  public void addDriver(DraDriver driver) {
    drivers.add(driver);
    requestSync();
  }

  public void removeDriver(DraDriver driver) {
    drivers.remove(driver);
  }

  @Override
  public void close() {
    synchronized (lifecycle) {
      if (closed) {
        return;
      }
      closed = true;
      if (sweeper != null) {
        sweeper.cancel(false);
      }
    }
    health.close();
    if (ownExecutor) {
      executor.shutdownNow();
      try {
        if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
          LOG.warn("The DRA claim manager of node {} did not stop within 10 s", nodeName);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    LOG.info("DRA claim manager for node {} stopped", nodeName);
  }

  public List<ClaimInfo> claims() {
    return claimView;
  }

  public List<DeviceHealthInfo> health() {
    return health.health();
  }

  public Optional<String> checkpointProblem() {
    return Optional.ofNullable(checkpointProblem);
  }

  public List<ContainerDevices> containers() {
    return ClaimViews.containers(claimView, activePods.values(), gates);
  }

  // ---- the work, on the executor's thread

  /** Logs what a task throws: the executor would keep it in a future that nobody reads. */
  private Runnable guarded(Runnable task) {
    return () -> {
      try {
        task.run();
      } catch (RuntimeException | Error e) {
        LOG.error("The DRA claim manager of node {} failed", nodeName, e);
      }
    };
  }

  private void requestSync() {
    if (!loaded) {
      return; // the load syncs once it is done
    }
    if (syncQueued.compareAndSet(false, true)) {
      try {
        executor.execute(guarded(() -> {
          syncQueued.set(false);
          sync();
        }));
      } catch (RejectedExecutionException e) {
        syncQueued.set(false); // closed
      }
    }
  }

  private void load() {
    health.restore();
    try {
      for (ClaimEntry entry : checkpoint.read()) {
        entry.restoredPods.addAll(entry.podUids);
        cache.put(entry.key(), entry);
      }
      LOG.info("Loaded {} claims from {}", cache.size(), checkpoint.file());
    } catch (Checkpoint.CorruptException e) {
      checkpointProblem = e.getMessage();
      LOG.error("{}", e.getMessage());
    } catch (IOException e) {
      checkpointProblem = "cannot read checkpoint " + checkpoint.file() + ": " + e;
      LOG.error("{}; starting with no claims", checkpointProblem);
    }
    if (checkpointProblem == null && !Files.exists(checkpoint.file())) {
      writeCheckpoint(); // as the kubelet, which creates it at start
    }
    loaded = true;
    publishView();
    sync();
  }

  private void sweep() {
    swept = true;
    removedPods.clear(); // from now on, every pod that is not active is gone
    sync();
  }

  private void sync() {
    try {
      Instant now = clock.instant();
      List<Pod> pods = new ArrayList<>(activePods.values());
      pods.sort(Comparator.comparing(p -> p.getMetadata().getUid()));
      // every pod due is validated and recorded first, so that one checkpoint write covers them all
      List<Admitted> admitted = new ArrayList<>();
      boolean recorded = false;
      for (Pod pod : pods) {
        String uid = pod.getMetadata().getUid();
        if (!PodClaims.isActive(pod) || String.valueOf(pod.getMetadata().getResourceVersion()).equals(preparedPods.get(uid))
            || failures.podWaits(uid, now)) {
          continue;
        }
        Admitted a = admit(pod);
        if (a != null) {
          admitted.add(a);
          recorded |= a.recorded();
        }
      }
      if (!admitted.isEmpty() && (!recorded || writeCheckpoint())) { // pods are recorded before any driver call
        boolean prepared = false;
        for (Admitted a : admitted) {
          String uid = a.pod().getMetadata().getUid();
          boolean started = PodClaims.started(a.pod());
          // the kubelet's rule: an entry loaded from the checkpoint is prepared again when a pod starts with it;
          // a pod that was already running keeps the devices from disk
          List<ClaimEntry> todo = a.entries().stream()
              .filter(e -> !e.prepared && !(started && e.restoredPods.contains(uid))).toList();
          prepared |= !todo.isEmpty();
          if (step.prepare(uid, todo, a.allocations())) {
            a.entries().forEach(e -> failures.clear(e.key()));
            todo.forEach(e -> LOG.info("Prepared ResourceClaim {} for pod {}/{}: {}", e.key(),
                a.pod().getMetadata().getNamespace(), a.pod().getMetadata().getName(), e.drivers.keySet()));
            preparedPods.put(uid, String.valueOf(a.pod().getMetadata().getResourceVersion()));
            failures.podDone(uid);
            failures.clearIf(f -> uid.equals(f.podUid()) && !cache.containsKey(f.key()));
          }
        }
        if (prepared) {
          writeCheckpoint();
        }
      }
      preparedPods.keySet().removeIf(uid -> !activePods.containsKey(uid));
      failures.keepPods(activePods::containsKey);
      failures.clearIf(f -> f.podUid() != null && !activePods.containsKey(f.podUid())
          && !cache.containsKey(f.key()));
      unprepareUnused(now);
      podHealth.sync(activePods.values().stream().filter(PodClaims::isActive).toList(), cache);
    } catch (RuntimeException e) {
      LOG.error("The DRA claim manager of node {} failed a sync; it runs again at the next change", nodeName, e);
    } finally {
      publishView();
      wakeUps.retryAt(failures.nextRetry());
      wakeUps.expiryAt(health.nextExpiry());
    }
  }


  private boolean podInUse(String uid) {
    Pod pod = activePods.get(uid);
    if (pod != null) {
      return PodClaims.isActive(pod);
    }
    return !swept && !removedPods.contains(uid); // from the checkpoint, not yet reported by the pod source
  }

  /** A pod whose claims passed validation and are in the cache; {@code recorded}: the cache changed. */
  private record Admitted(Pod pod, List<ClaimEntry> entries,
      Map<String, List<DeviceRequestAllocationResult>> allocations, boolean recorded) {
  }

  /** Validates every claim of the pod and records the pod in the cache; null (and a failure kept) if one fails. */
  private Admitted admit(Pod pod) {
    String podUid = pod.getMetadata().getUid();
    String ns = pod.getMetadata().getNamespace();
    // validation before any state change: nothing is recorded unless every claim can be prepared now
    List<ClaimEntry> toUse = new ArrayList<>();
    Map<String, List<String>> allocationDrivers = new HashMap<>();
    Map<String, List<DeviceRequestAllocationResult>> allocations = new HashMap<>();
    try {
      for (PodClaim pc : PodClaims.of(pod, gates)) {
        ClaimValidation.Valid valid = validation.check(pod, pc);
        String key = ns + "/" + pc.name();
        ClaimEntry cached = cache.get(key);
        String claimUid = valid.claim().getMetadata().getUid();
        if (cached != null && !cached.uid.equals(claimUid)) {
          throw new PodClaimException(pc.name(), "ResourceClaim " + key + " was replaced (UID " + claimUid
              + ", prepared " + cached.uid + "); the old one must be unprepared first");
        }
        if (cached != null && cached.unpreparing) {
          throw new PodClaimException(pc.name(), "ResourceClaim " + key + " is being unprepared");
        }
        toUse.add(cached != null ? cached : new ClaimEntry(ns, pc.name(), claimUid));
        allocationDrivers.put(key, valid.drivers());
        allocations.put(key, valid.results());
      }
    } catch (PodClaimException e) {
      failures.fail(ns, e.claimName, podUid, e.getMessage());
      return null;
    }
    boolean changed = false;
    for (ClaimEntry use : toUse) {
      if (cache.putIfAbsent(use.key(), use) == null) {
        allocationDrivers.get(use.key()).forEach(d -> use.drivers.putIfAbsent(d, List.of()));
        changed = true;
      }
      changed |= use.podUids.add(podUid);
    }
    return new Admitted(pod, toUse, allocations, changed);
  }

  private void unprepareUnused(Instant now) {
    boolean changed = false;
    List<ClaimEntry> unused = new ArrayList<>();
    for (ClaimEntry e : cache.values()) {
      changed |= e.podUids.removeIf(uid -> !podInUse(uid));
      e.restoredPods.retainAll(e.podUids);
      if (e.podUids.isEmpty()) {
        Failures.Failure f = failures.get(e.key());
        if (f == null || !now.isBefore(f.nextRetry())) {
          e.unpreparing = true;
          unused.add(e);
        }
      }
    }
    if (changed) {
      writeCheckpoint();
    }
    if (unused.isEmpty()) {
      return;
    }
    Set<String> failed = step.unprepare(unused);
    boolean removed = false;
    for (ClaimEntry e : unused) {
      if (!failed.contains(e.key())) {
        cache.remove(e.key());
        failures.clear(e.key());
        removed = true;
        LOG.info("Unprepared ResourceClaim {} ({}): no pod of node {} uses it", e.key(), e.uid, nodeName);
      }
    }
    if (removed) {
      writeCheckpoint();
    }
  }

  private boolean writeCheckpoint() {
    try {
      checkpoint.write(cache.values());
      return true;
    } catch (IOException | UncheckedIOException e) {
      LOG.error("Writing checkpoint {} failed; claims are not prepared until it can be written",
          checkpoint.file(), e);
      return false;
    }
  }

  private void publishView() {
    claimView = ClaimViews.claims(cache.values(), failures, activePods.values());
  }
}
