package dev.nodelet.dra.claims;

import dev.nodelet.dra.ClaimRef;
import dev.nodelet.dra.DraDriver;
import dev.nodelet.dra.PrepareResult;
import dev.nodelet.dra.PreparedDevice;
import dev.nodelet.dra.claims.internal.Checkpoint;
import dev.nodelet.dra.claims.internal.ClaimEntry;
import dev.nodelet.dra.claims.internal.HealthTracker;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Prepares the ResourceClaims of the pods of one node with their drivers, as the kubelet's DRA manager does; plain
 * Java, so that a driver can be tested without OSGi. Build it with {@link #builder}, {@link #start()} it, feed it
 * the node's pods ({@link #podUpdated}, {@link #podRemoved}) and the drivers ({@link #addDriver},
 * {@link #removeDriver}), and {@link #close()} it.
 *
 * <p>All work runs on one thread of the executor, so drivers are called one at a time. For each active pod (not
 * in a terminal phase and not being deleted) the manager resolves {@code spec.resourceClaims} ({@code
 * resourceClaimName}, or the pod's {@code status.resourceClaimStatuses} for a template), reads each claim from the
 * API server, and requires it to be allocated, reserved for the pod (and, for a template claim, controlled by the
 * pod) and every driver of {@code status.allocation.devices.results} to be registered. It then records the pod in
 * the checkpoint <em>before</em> calling {@code prepare} of each driver (batched per driver, drivers in name
 * order), and records the devices once every driver succeeded. When no active pod uses a claim any more it calls
 * {@code unprepare} of each of its drivers and drops it from the checkpoint. Pods in the checkpoint that the pod
 * source never reported are taken as gone at the first sweep (by default 60 s after the start), so a restart
 * leaks nothing. Every failure is kept per claim and retried with an exponential backoff.
 *
 * <p>Nodelet differs from the kubelet in two ways: the checkpoint records that a claim was prepared, so a restart
 * prepares nothing twice; and an unusable checkpoint is moved aside and rebuilt instead of stopping the node.
 */
public final class ClaimManager implements ClaimStatus, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ClaimManager.class);

  /** The settings of a claim manager; {@link #builder} has the defaults. */
  public static final class Builder {
    private final KubernetesClient client;
    private final String nodeName;
    private Path stateDirectory = Path.of("/var/lib/nodelet");
    private Clock clock = Clock.systemUTC();
    private ScheduledExecutorService executor;
    private Duration sweepPeriod = Duration.ofSeconds(60);
    private Duration retryInitial = Duration.ofMillis(500);
    private Duration retryMax = Duration.ofSeconds(30);
    private Duration healthRetry = Duration.ofSeconds(5);

    private Builder(KubernetesClient client, String nodeName) {
      this.client = Objects.requireNonNull(client, "client");
      this.nodeName = Objects.requireNonNull(nodeName, "nodeName");
    }

    /** Where the checkpoint file {@code dra_manager_state} is kept; default {@code /var/lib/nodelet}. */
    public Builder stateDirectory(Path directory) {
      this.stateDirectory = Objects.requireNonNull(directory, "directory");
      return this;
    }

    /** The clock for retry times and health timeouts; default the system clock. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * The executor that runs all work (it must run one task at a time for the manager's guarantees); default a
     * daemon thread of the manager's own, ended by {@link #close()}. An executor passed here is not shut down.
     */
    public Builder executor(ScheduledExecutorService executor) {
      this.executor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /** How often claims of pods that are gone are looked for; the first sweep comes one period after the start. */
    public Builder sweepPeriod(Duration period) {
      this.sweepPeriod = positive(period, "sweepPeriod");
      return this;
    }

    /** The first and the longest delay before a failed step is tried again; default 500 ms and 30 s. */
    public Builder retry(Duration initial, Duration max) {
      this.retryInitial = positive(initial, "retry initial");
      this.retryMax = positive(max, "retry max");
      if (max.compareTo(initial) < 0) {
        throw new IllegalArgumentException("retry max " + max + " is below retry initial " + initial);
      }
      return this;
    }

    /** How long after a broken health stream it is watched again; default 5 s. */
    public Builder healthRetry(Duration delay) {
      this.healthRetry = positive(delay, "healthRetry");
      return this;
    }

    public ClaimManager build() {
      return new ClaimManager(this);
    }

    private static Duration positive(Duration d, String what) {
      if (d == null || d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(what + " must be a positive duration, was " + d);
      }
      return d;
    }
  }

  /** Starts building a claim manager for the pods of {@code nodeName}. */
  public static Builder builder(KubernetesClient client, String nodeName) {
    return new Builder(client, nodeName);
  }

  /** A step that failed, with its retry. */
  private record Failure(String namespace, String name, String podUid, String message, int attempts,
      Instant nextRetry) {
  }

  /** A pod's claim entry resolved to a claim name; name null: nothing to prepare. */
  private record PodClaim(String entry, String name, boolean fromTemplate) {
  }

  private static final class PodClaimException extends Exception {
    private static final long serialVersionUID = 1L;
    final String claimName;

    PodClaimException(String claimName, String message) {
      super(message);
      this.claimName = claimName;
    }
  }

  private final KubernetesClient client;
  private final String nodeName;
  private final Clock clock;
  private final ScheduledExecutorService executor;
  private final boolean ownExecutor;
  private final Duration sweepPeriod;
  private final Duration retryInitial;
  private final Duration retryMax;
  private final Checkpoint checkpoint;
  private final HealthTracker health;

  // fed from any thread
  private final Map<String, Pod> activePods = new ConcurrentHashMap<>();
  private final Set<String> removedPods = ConcurrentHashMap.newKeySet();
  private final Map<String, List<DraDriver>> drivers = new ConcurrentHashMap<>();
  private final AtomicBoolean syncQueued = new AtomicBoolean();

  // the executor's thread only
  private final Map<String, ClaimEntry> cache = new TreeMap<>();
  private final Map<String, Failure> failures = new TreeMap<>(); // by claim key
  private final Map<String, Instant> podRetry = new HashMap<>();
  private final Map<String, String> preparedPods = new HashMap<>(); // pod UID -> resourceVersion prepared
  private boolean swept;
  private volatile boolean loaded;

  private final Object lifecycle = new Object();
  private ScheduledFuture<?> sweeper; // guarded by lifecycle
  private boolean closed; // guarded by lifecycle
  private volatile List<ClaimInfo> claimView = List.of();
  private volatile String checkpointProblem;

  private ClaimManager(Builder b) {
    this.client = b.client;
    this.nodeName = b.nodeName;
    this.clock = b.clock;
    this.ownExecutor = b.executor == null;
    this.executor = ownExecutor ? Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "nodelet-dra-claims");
      t.setDaemon(true);
      return t;
    }) : b.executor;
    this.sweepPeriod = b.sweepPeriod;
    this.retryInitial = b.retryInitial;
    this.retryMax = b.retryMax;
    this.checkpoint = new Checkpoint(b.stateDirectory, clock);
    this.health = new HealthTracker(clock, executor, b.healthRetry);
  }

  /** Loads the checkpoint and starts the periodic sweep. Returns at once; the work runs on the executor. */
  public void start() {
    synchronized (lifecycle) {
      if (closed) {
        throw new IllegalStateException("the claim manager of node " + nodeName + " is closed");
      }
      executor.execute(guarded(this::load));
      sweeper = executor.scheduleWithFixedDelay(guarded(this::sweep), sweepPeriod.toMillis(),
          sweepPeriod.toMillis(), TimeUnit.MILLISECONDS);
    }
    LOG.info("DRA claim manager started for node {} (checkpoint {})", nodeName, checkpoint.file());
  }

  /** A pod of this node was created or updated. */
  public void podUpdated(Pod pod) {
    String uid = pod.getMetadata().getUid();
    removedPods.remove(uid);
    activePods.put(uid, pod);
    requestSync();
  }

  /** A pod left this node. */
  public void podRemoved(Pod pod) {
    String uid = pod.getMetadata().getUid();
    activePods.remove(uid);
    removedPods.add(uid);
    requestSync();
  }

  /** A driver registration; the newest registration of a name that prepares claims is the one called. */
  public void addDriver(DraDriver driver) {
    String name = driver.driverName();
    drivers.compute(name, (k, list) -> {
      List<DraDriver> next = list == null ? new ArrayList<>() : new ArrayList<>(list);
      next.add(driver);
      return next;
    });
    health.follow(name, driver);
    requestSync();
  }

  /** A driver registration went away; its claims stay prepared and wait for the driver to come back. */
  public void removeDriver(DraDriver driver) {
    String name = driver.driverName();
    List<DraDriver> left = drivers.computeIfPresent(name, (k, list) -> {
      List<DraDriver> next = new ArrayList<>(list);
      next.removeIf(d -> d == driver);
      return next.isEmpty() ? null : next;
    });
    if (left == null) {
      health.forget(name);
    } else {
      health.follow(name, left.get(left.size() - 1));
    }
  }

  /** Stops the work; the checkpoint stays, nothing is unprepared. */
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

  @Override
  public List<ClaimInfo> claims() {
    return claimView;
  }

  @Override
  public List<DeviceHealthInfo> health() {
    return health.health();
  }

  @Override
  public Optional<String> checkpointProblem() {
    return Optional.ofNullable(checkpointProblem);
  }

  @Override
  public List<ContainerDevices> containers() {
    Map<String, ClaimInfo> byKey = new HashMap<>();
    claimView.forEach(c -> byKey.put(c.namespace() + "/" + c.name(), c));
    List<ContainerDevices> out = new ArrayList<>();
    List<Pod> pods = new ArrayList<>(activePods.values());
    pods.sort(Comparator.comparing((Pod p) -> p.getMetadata().getNamespace())
        .thenComparing(p -> p.getMetadata().getName()));
    for (Pod pod : pods) {
      String ns = pod.getMetadata().getNamespace();
      List<Container> containers = new ArrayList<>();
      containers.addAll(Optional.ofNullable(pod.getSpec().getInitContainers()).orElse(List.of()));
      containers.addAll(Optional.ofNullable(pod.getSpec().getContainers()).orElse(List.of()));
      for (Container c : containers) {
        if (c.getResources() == null || c.getResources().getClaims() == null) {
          continue;
        }
        for (io.fabric8.kubernetes.api.model.ResourceClaim use : c.getResources().getClaims()) {
          String claimName = null;
          try {
            PodClaim pc = resolve(pod, use.getName());
            claimName = pc == null ? null : pc.name();
          } catch (PodClaimException e) {
            // not resolvable yet: no devices
          }
          ClaimInfo info = claimName == null ? null : byKey.get(ns + "/" + claimName);
          List<String> ids = new ArrayList<>();
          if (info != null && info.state() == ClaimInfo.State.PREPARED) {
            info.devices().values().forEach(devices -> devices.stream()
                .filter(d -> matches(d, use.getRequest()))
                .forEach(d -> ids.addAll(d.cdiDeviceIds())));
          }
          out.add(new ContainerDevices(ns, pod.getMetadata().getName(), c.getName(), use.getName(),
              use.getRequest(), ids));
        }
      }
    }
    return out;
  }

  /** The devices of a claim that a container's request gets; drivers report base request names. */
  private static boolean matches(PreparedDevice d, String request) {
    if (request == null || request.isEmpty() || d.requestNames().isEmpty()) {
      return true;
    }
    String base = request.contains("/") ? request.substring(0, request.indexOf('/')) : request;
    return d.requestNames().stream().anyMatch(r -> r.equals(request) || r.equals(base));
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
      } catch (java.util.concurrent.RejectedExecutionException e) {
        syncQueued.set(false); // closed
      }
    }
  }

  private void load() {
    try {
      for (ClaimEntry entry : checkpoint.read()) {
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
        if (!isActive(pod)) {
          continue;
        }
        String uid = pod.getMetadata().getUid();
        String rv = String.valueOf(pod.getMetadata().getResourceVersion());
        if (rv.equals(preparedPods.get(uid))) {
          continue;
        }
        Instant retryAt = podRetry.get(uid);
        if (retryAt != null && now.isBefore(retryAt)) {
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
          prepared |= a.entries().stream().anyMatch(e -> !e.prepared);
          if (prepare(a)) {
            preparedPods.put(uid, String.valueOf(a.pod().getMetadata().getResourceVersion()));
            podRetry.remove(uid);
            failures.values().removeIf(f -> uid.equals(f.podUid()) && !cache.containsKey(f.namespace() + "/"
                + f.name()));
          }
        }
        if (prepared) {
          writeCheckpoint();
        }
      }
      preparedPods.keySet().removeIf(uid -> !activePods.containsKey(uid));
      podRetry.keySet().removeIf(uid -> !activePods.containsKey(uid));
      failures.values().removeIf(f -> f.podUid() != null && !activePods.containsKey(f.podUid())
          && !cache.containsKey(f.namespace() + "/" + f.name()));
      unprepareUnused(now);
    } catch (RuntimeException e) {
      LOG.error("The DRA claim manager of node {} failed a sync; it runs again at the next change", nodeName, e);
    } finally {
      publishView();
      scheduleNextRetry();
    }
  }

  private static boolean isActive(Pod pod) {
    String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    return pod.getMetadata().getDeletionTimestamp() == null && !"Succeeded".equals(phase) && !"Failed".equals(phase);
  }

  private boolean podInUse(String uid) {
    Pod pod = activePods.get(uid);
    if (pod != null) {
      return isActive(pod);
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
    List<PodResourceClaim> entries = Optional.ofNullable(pod.getSpec().getResourceClaims()).orElse(List.of());
    // validation before any state change: nothing is recorded unless every claim can be prepared now
    List<ClaimEntry> toUse = new ArrayList<>();
    Map<String, List<String>> allocationDrivers = new LinkedHashMap<>();
    Map<String, List<DeviceRequestAllocationResult>> allocations = new HashMap<>();
    for (PodResourceClaim entry : entries) {
      try {
        PodClaim pc = resolve(pod, entry.getName());
        if (pc == null) {
          continue;
        }
        ResourceClaim claim = read(ns, pc.name());
        List<String> claimDrivers = validate(pod, pc, claim);
        String key = ns + "/" + pc.name();
        ClaimEntry cached = cache.get(key);
        String claimUid = claim.getMetadata().getUid();
        if (cached != null && !cached.uid.equals(claimUid)) {
          throw new PodClaimException(pc.name(), "ResourceClaim " + key + " was replaced (UID " + claimUid
              + ", prepared " + cached.uid + "); the old one must be unprepared first");
        }
        if (cached != null && cached.unpreparing) {
          throw new PodClaimException(pc.name(), "ResourceClaim " + key + " is being unprepared");
        }
        ClaimEntry use = cached != null ? cached : new ClaimEntry(ns, pc.name(), claimUid);
        toUse.add(use);
        allocationDrivers.put(key, claimDrivers);
        allocations.put(key, claim.getStatus().getAllocation().getDevices().getResults());
      } catch (PodClaimException e) {
        fail(ns, e.claimName, podUid, e.getMessage());
        return null;
      }
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

  /** Calls the drivers for the admitted pod's unprepared claims, per driver in name order; true when all are. */
  private boolean prepare(Admitted admitted) {
    Pod pod = admitted.pod();
    String podUid = pod.getMetadata().getUid();
    String ns = pod.getMetadata().getNamespace();
    List<ClaimEntry> toUse = admitted.entries();
    Map<String, List<DeviceRequestAllocationResult>> allocations = admitted.allocations();
    List<ClaimEntry> unprepared = toUse.stream().filter(e -> !e.prepared).toList();
    if (unprepared.isEmpty()) {
      toUse.forEach(e -> failures.remove(e.key()));
      return true;
    }
    Set<String> driverNames = new TreeSet<>();
    unprepared.forEach(e -> driverNames.addAll(e.drivers.keySet()));
    Map<String, Map<String, List<PreparedDevice>>> results = new HashMap<>(); // claim UID -> driver -> devices
    for (String driverName : driverNames) {
      List<ClaimEntry> batch = unprepared.stream().filter(e -> e.drivers.containsKey(driverName)).toList();
      Map<String, ClaimEntry> byUid = new LinkedHashMap<>();
      batch.forEach(e -> byUid.putIfAbsent(e.uid, e));
      DraDriver driver = driver(driverName);
      if (driver == null) {
        batch.forEach(e -> fail(e.namespace, e.name, podUid, "DRA driver " + driverName + " is not registered"
            + " or does not prepare claims"));
        return false;
      }
      Map<String, PrepareResult> answer;
      try {
        answer = driver.prepare(byUid.values().stream().map(e -> new ClaimRef(e.namespace, e.name, e.uid,
            Optional.ofNullable(allocations.get(e.key())).orElse(List.of()).stream()
                .filter(r -> driverName.equals(r.getDriver())).toList())).toList());
      } catch (RuntimeException e) {
        String why = "preparing with DRA driver " + driverName + " failed: " + e.getMessage();
        batch.forEach(c -> fail(c.namespace, c.name, podUid, why));
        return false;
      }
      boolean ok = true;
      for (ClaimEntry e : byUid.values()) {
        PrepareResult r = answer == null ? null : answer.get(e.uid);
        if (r == null || !r.ok()) {
          ok = false;
          fail(e.namespace, e.name, podUid, "DRA driver " + driverName + " did not prepare the claim: "
              + (r == null ? "no result for claim UID " + e.uid : r.error()));
        } else {
          results.computeIfAbsent(e.uid, k -> new TreeMap<>()).put(driverName, r.devices());
        }
      }
      if (answer != null && answer.keySet().stream().anyMatch(uid -> !byUid.containsKey(uid))) {
        ok = false;
        batch.forEach(c -> fail(c.namespace, c.name, podUid, "DRA driver " + driverName
            + " answered for a claim it was not asked about"));
      }
      if (!ok) {
        return false;
      }
    }
    for (ClaimEntry e : unprepared) {
      results.getOrDefault(e.uid, Map.of()).forEach(e.drivers::put); // replaces that driver's devices
      e.prepared = true;
      failures.remove(e.key());
      LOG.info("Prepared ResourceClaim {} for pod {}/{}: {}", e.key(), ns, pod.getMetadata().getName(),
          e.drivers.keySet());
    }
    return true;
  }

  /** The claim name of a pod's claim entry; null when the entry needs no claim (a template produced none). */
  private static PodClaim resolve(Pod pod, String entryName) throws PodClaimException {
    PodResourceClaim entry = Optional.ofNullable(pod.getSpec().getResourceClaims()).orElse(List.of()).stream()
        .filter(e -> entryName.equals(e.getName())).findFirst().orElse(null);
    String label = "pod " + pod.getMetadata().getName() + ", claim " + entryName;
    if (entry == null) {
      throw new PodClaimException(label, "pod " + pod.getMetadata().getName() + " has no resourceClaims entry "
          + entryName);
    }
    if (entry.getResourceClaimName() != null) {
      return new PodClaim(entryName, entry.getResourceClaimName(), false);
    }
    if (entry.getResourceClaimTemplateName() == null) {
      throw new PodClaimException(label, "resourceClaims entry " + entryName + " of pod "
          + pod.getMetadata().getName() + " names neither resourceClaimName nor resourceClaimTemplateName");
    }
    List<PodResourceClaimStatus> statuses = pod.getStatus() == null ? null
        : pod.getStatus().getResourceClaimStatuses();
    PodResourceClaimStatus status = statuses == null ? null
        : statuses.stream().filter(s -> entryName.equals(s.getName())).findFirst().orElse(null);
    if (status == null) {
      throw new PodClaimException(label, "ResourceClaim not created yet for entry " + entryName + " of pod "
          + pod.getMetadata().getName());
    }
    return status.getResourceClaimName() == null ? null
        : new PodClaim(entryName, status.getResourceClaimName(), true);
  }

  private ResourceClaim read(String ns, String name) throws PodClaimException {
    try {
      ResourceClaim claim = client.resources(ResourceClaim.class).inNamespace(ns).withName(name).get();
      if (claim == null) {
        throw new PodClaimException(name, "ResourceClaim " + ns + "/" + name + " does not exist");
      }
      return claim;
    } catch (KubernetesClientException e) {
      throw new PodClaimException(name, "reading ResourceClaim " + ns + "/" + name + " failed: " + e.getMessage());
    }
  }

  /** The drivers of the claim's allocation, after the kubelet's checks. */
  private List<String> validate(Pod pod, PodClaim pc, ResourceClaim claim) throws PodClaimException {
    String podUid = pod.getMetadata().getUid();
    String key = claim.getMetadata().getNamespace() + "/" + pc.name();
    if (pc.fromTemplate()) {
      boolean controlled = Optional.ofNullable(claim.getMetadata().getOwnerReferences()).orElse(List.of()).stream()
          .anyMatch(o -> Boolean.TRUE.equals(o.getController()) && podUid.equals(o.getUid()));
      if (!controlled) {
        throw new PodClaimException(pc.name(), "ResourceClaim " + key + " was not created for pod "
            + pod.getMetadata().getName() + " (no controller reference to it)");
      }
    }
    var status = claim.getStatus();
    boolean reserved = status != null && status.getReservedFor() != null
        && status.getReservedFor().stream().anyMatch(r -> podUid.equals(r.getUid()));
    if (!reserved) {
      throw new PodClaimException(pc.name(), "ResourceClaim " + key + " is not reserved for pod "
          + pod.getMetadata().getName() + " yet");
    }
    if (status.getAllocation() == null || status.getAllocation().getDevices() == null) {
      throw new PodClaimException(pc.name(), "ResourceClaim " + key + " is not allocated yet");
    }
    Set<String> names = new TreeSet<>();
    for (DeviceRequestAllocationResult r : Optional.ofNullable(status.getAllocation().getDevices().getResults())
        .orElse(List.of())) {
      names.add(r.getDriver());
    }
    for (String name : names) {
      if (driver(name) == null) {
        throw new PodClaimException(pc.name(), "ResourceClaim " + key + " needs DRA driver " + name
            + ", which is not registered on this node or does not prepare claims");
      }
    }
    return List.copyOf(names);
  }

  private DraDriver driver(String name) {
    List<DraDriver> registered = drivers.get(name);
    if (registered == null) {
      return null;
    }
    for (int i = registered.size() - 1; i >= 0; i--) {
      if (registered.get(i).preparesClaims()) {
        return registered.get(i);
      }
    }
    return null;
  }

  private void unprepareUnused(Instant now) {
    boolean changed = false;
    List<ClaimEntry> unused = new ArrayList<>();
    for (ClaimEntry e : cache.values()) {
      changed |= e.podUids.removeIf(uid -> !podInUse(uid));
      if (e.podUids.isEmpty()) {
        Failure f = failures.get(e.key());
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
    Set<String> failed = new HashSet<>();
    Set<String> driverNames = new TreeSet<>();
    unused.forEach(e -> driverNames.addAll(e.drivers.keySet()));
    for (String driverName : driverNames) {
      List<ClaimEntry> batch = unused.stream().filter(e -> e.drivers.containsKey(driverName)
          && !failed.contains(e.key())).toList();
      if (batch.isEmpty()) {
        continue;
      }
      DraDriver driver = driver(driverName);
      if (driver == null) {
        batch.forEach(e -> {
          failed.add(e.key());
          fail(e.namespace, e.name, null, "DRA driver " + driverName + " is not registered; the claim is"
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
            fail(e.namespace, e.name, null, "DRA driver " + driverName + " did not unprepare the claim: " + error);
          }
        }
      } catch (RuntimeException ex) {
        batch.forEach(e -> {
          failed.add(e.key());
          fail(e.namespace, e.name, null, "unpreparing with DRA driver " + driverName + " failed: "
              + ex.getMessage());
        });
      }
    }
    boolean removed = false;
    for (ClaimEntry e : unused) {
      if (!failed.contains(e.key())) {
        cache.remove(e.key());
        failures.remove(e.key());
        removed = true;
        LOG.info("Unprepared ResourceClaim {} ({}): no pod of node {} uses it", e.key(), e.uid, nodeName);
      }
    }
    if (removed) {
      writeCheckpoint();
    }
  }

  private void fail(String namespace, String name, String podUid, String message) {
    String key = namespace + "/" + name;
    Failure before = failures.get(key);
    int attempts = before == null ? 1 : before.attempts() + 1;
    long delay = Math.min(retryMax.toMillis(),
        retryInitial.toMillis() << Math.min(attempts - 1, 20));
    Instant next = clock.instant().plusMillis(delay);
    failures.put(key, new Failure(namespace, name, podUid, message, attempts, next));
    if (podUid != null) {
      podRetry.merge(podUid, next, (a, b) -> a.isAfter(b) ? a : b);
    }
    if (before == null || !before.message().equals(message)) {
      LOG.error("ResourceClaim {}: {}; trying again in {} ms", key, message, delay);
    } else {
      LOG.debug("ResourceClaim {}: {} (attempt {})", key, message, attempts);
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

  private void scheduleNextRetry() {
    Instant next = failures.values().stream().map(Failure::nextRetry).min(Comparator.naturalOrder()).orElse(null);
    if (next == null) {
      return;
    }
    long delay = Math.max(0, Duration.between(clock.instant(), next).toMillis());
    try {
      executor.schedule(guarded(this::requestSync), delay, TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closed
    }
  }

  private void publishView() {
    Map<String, String> podNames = new HashMap<>();
    activePods.values().forEach(p -> podNames.put(p.getMetadata().getUid(),
        p.getMetadata().getNamespace() + "/" + p.getMetadata().getName()));
    Map<String, ClaimInfo> view = new TreeMap<>();
    for (ClaimEntry e : cache.values()) {
      Failure f = failures.get(e.key());
      ClaimInfo.State state = e.unpreparing ? ClaimInfo.State.UNPREPARING
          : f != null ? ClaimInfo.State.FAILED
          : e.prepared ? ClaimInfo.State.PREPARED : ClaimInfo.State.PREPARING;
      Map<String, List<PreparedDevice>> devices = e.prepared || e.unpreparing ? Map.copyOf(e.drivers) : Map.of();
      view.put(e.key(), new ClaimInfo(e.namespace, e.name, e.uid, state,
          e.podUids.stream().map(uid -> podNames.getOrDefault(uid, uid)).toList(), devices,
          f == null ? null : f.message(), f == null ? null : f.nextRetry()));
    }
    for (Failure f : failures.values()) {
      view.putIfAbsent(f.namespace() + "/" + f.name(), new ClaimInfo(f.namespace(), f.name(), "",
          ClaimInfo.State.FAILED, f.podUid() == null ? List.of() : List.of(podNames.getOrDefault(f.podUid(),
              f.podUid())), Map.of(), f.message(), f.nextRetry()));
    }
    claimView = List.copyOf(view.values());
  }
}
