package dev.nodelet.dra.claims.internal;

import dev.nodelet.controller.ExecutorScheduler;
import dev.nodelet.dra.ClaimPreparation;
import dev.nodelet.dra.DeviceHealthSource;
import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ContainerDevices;
import dev.nodelet.dra.claims.DeviceHealthInfo;
import io.fabric8.kubernetes.api.model.Pod;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The claim manager's work, one task at a time on its executor: load the checkpoint, then per sync move the pods on
 * through the {@link PreparationPipeline} (claims validated and recorded, checkpoint written before any driver call,
 * prepared), and unprepare the claims no active pod uses. The state lives on the executor's thread; pods and drivers
 * are fed from any thread.
 */
public final class ClaimReconciler implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ClaimReconciler.class);
  /** Pods whose claims are read at the same time, one pod per thread. */
  private static final int IO_THREADS = 4;

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
  private final PreparationStep step;
  private final PreparationPipeline pipeline;
  private final java.time.Clock clock;
  private final ExecutorService ownIo; // null when the io executor is not the manager's own
  private final ExecutorService ownWrites; // the checkpoint writes, apart from the reads; null as ownIo
  private final CheckpointWriter writer;

  // fed from any thread
  private final Map<String, Pod> activePods = new ConcurrentHashMap<>();
  private final Set<String> removedPods = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean syncQueued = new AtomicBoolean();

  // the executor's thread only
  private final Map<String, ClaimEntry> cache = new TreeMap<>();
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
    // claim reads (several at a time) and checkpoint writes; with an executor given, on it unless told otherwise
    this.ownIo = s.io() == null && ownExecutor ? IoPools.pool("nodelet-dra-claims-read-", IO_THREADS) : null;
    this.ownWrites = ownIo == null ? null : IoPools.pool("nodelet-dra-claims-checkpoint-", 1);
    Executor io = s.io() != null ? s.io() : ownIo != null ? ownIo : executor;
    this.writer = new CheckpointWriter(checkpoint::store, ownWrites != null ? ownWrites : io,
        "checkpoint " + checkpoint.file());
    this.health = new HealthTracker(clock, ExecutorScheduler.on(executor, "the DRA claim manager"), s.healthRetry(),
        new HealthState(s.stateDirectory()), this::requestSync);
    this.podHealth = new PodHealthStatus(s.client(), health);
    this.wakeUps = new WakeUps(clock, executor, guarded(this::requestSync));
    this.drivers = new Drivers(health);
    this.failures = new Failures(clock, s.retryInitial(), s.retryMax());
    this.step = new PreparationStep(drivers, failures);
    this.pipeline = new PreparationPipeline(activePods, cache,
        new PodAdmission(new ClaimValidation(s.client(), drivers, gates), gates, failures), step, failures, writer,
        this::writeCheckpoint, io, this::requestSync);
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

  public void addDriver(ClaimPreparation driver) {
    drivers.add(driver);
    requestSync();
  }

  public void removeDriver(ClaimPreparation driver) {
    drivers.remove(driver);
  }

  public void addHealthSource(DeviceHealthSource source) {
    drivers.add(source);
  }

  public void removeHealthSource(DeviceHealthSource source) {
    drivers.remove(source);
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
    IoPools.stop(ownIo);
    IoPools.stop(ownWrites);
    LOG.info("DRA claim manager for node {} stopped", nodeName);
  }

  /**
   * Drops a claim from the cache and the checkpoint without asking its drivers to unprepare it; refused while an
   * active pod uses it. Completes with false for a claim not known, true once the checkpoint without it is on disk.
   */
  public CompletableFuture<Boolean> forget(String namespace, String name) {
    CompletableFuture<Boolean> done = new CompletableFuture<>();
    try {
      executor.execute(guarded(() -> forgetNow(namespace + "/" + name, done)));
    } catch (RejectedExecutionException e) {
      done.completeExceptionally(new IllegalStateException("the claim manager of node " + nodeName + " is closed"));
    }
    return done;
  }

  private void forgetNow(String key, CompletableFuture<Boolean> done) {
    ClaimEntry entry = cache.get(key);
    if (entry == null) {
      done.complete(false);
      return;
    }
    List<String> users = entry.podUids.stream().filter(this::podInUse).toList();
    if (!users.isEmpty()) {
      done.completeExceptionally(new IllegalStateException("ResourceClaim " + key + " is still used by pods "
          + users + "; it can be forgotten only once no active pod uses it"));
      return;
    }
    cache.remove(key);
    failures.clear(key);
    LOG.warn("ResourceClaim {} ({}) forgotten by hand: its drivers {} were not asked to unprepare it", key,
        entry.uid, entry.drivers.keySet());
    publishView();
    writeCheckpoint().whenComplete((ok, e) -> {
      if (e != null) {
        done.completeExceptionally(e);
      } else {
        done.complete(true);
      }
    });
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
      pipeline.advance(now);
      failures.keepPods(activePods::containsKey);
      failures.clearIf(f -> f.podUid() != null && !activePods.containsKey(f.podUid())
          && !cache.containsKey(f.key()));
      unprepareUnused(now);
      podHealth.sync(activePods.values().stream().filter(PodClaims::isActive).toList(), cache);
    } catch (RuntimeException e) {
      LOG.error("The DRA claim manager of node {} failed a sync; it runs again at the next change", nodeName, e);
    } finally {
      publishView();
      Optional<Instant> retry = failures.nextRetry();
      // a failure due now whose pod is being read or written again is settled when that ends, which syncs
      if (!pipeline.busy() || retry.isEmpty() || retry.get().isAfter(clock.instant())) {
        wakeUps.retryAt(retry);
      }
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

  /** The whole cache, written by the io executor; completes once it (or a newer write) is on disk. */
  private CompletableFuture<Void> writeCheckpoint() {
    try {
      return writer.write(checkpoint.encode(cache.values()));
    } catch (IOException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private void publishView() {
    claimView = ClaimViews.claims(cache.values(), failures, activePods.values());
  }
}
