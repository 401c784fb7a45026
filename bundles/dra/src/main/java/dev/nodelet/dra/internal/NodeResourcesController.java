package dev.nodelet.dra.internal;

import dev.nodelet.dra.runtime.ControllerOptions;
import dev.nodelet.dra.runtime.Scheduler;
import dev.nodelet.dra.DraDriver;
import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.SliceSummary;
import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.kube.watch.ReflectorException;
import dev.nodelet.kube.watch.ReflectorListener;
import dev.nodelet.kube.watch.Reflectors;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the resources of the registered {@link DraDriver}s as {@code resource.k8s.io/v1} ResourceSlices of one
 * node: the kubelet's node resources controller ({@code noderesources.go}), on the v1 pool model, with validation
 * of driver data and a grace period before the slices of a departed driver are deleted. It changes only the slices
 * it wrote ({@link NodeSlices}).
 *
 * <p>Threads: one worker syncs one driver at a time from a {@link WorkQueue}; the {@link Scheduler} runs timers,
 * monitor retries and the resync; the reflector delivers on the shared reflector threads. {@link #close()} ends all
 * of them and leaves the published slices in place (the start-up grace period of the next start covers them).
 */
public final class NodeResourcesController implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(NodeResourcesController.class);
  private final KubernetesClient client;
  private final Reflectors reflectors;
  private final ReflectorEngine ownReflectors;
  private final KubernetesSerialization serialization;
  private final String nodeName;
  private final Supplier<Optional<String>> nodeUid;
  private final Scheduler scheduler;
  private final ExecutorScheduler ownScheduler;
  private final ControllerOptions options;
  private final DoubleSupplier random;
  private final Clock clock;
  private final Map<String, String> syncFailures = new ConcurrentHashMap<>();
  private final Optional<DraMetrics> metrics;
  private final WorkQueue<String> queue;
  private final OwnWrites ownWrites = new OwnWrites();
  private final DriverMonitor.Sink sink = new MonitorSink();

  private final Object lock = new Object();
  private final Map<String, List<DraDriver>> registered = new HashMap<>(); // guarded by lock; newest last
  private final Map<String, Active> active = new HashMap<>(); // guarded by lock
  private final Map<String, Leaving> leaving = new HashMap<>(); // guarded by lock
  // drivers that write their own slices, with their registrations (newest last); guarded by lock
  private final Map<String, List<DraDriver>> selfPublishing = new HashMap<>();
  private final Map<String, String> errors = new HashMap<>(); // guarded by lock
  /** Driver services refused for their name, shown in the status until they go away. */
  private final Map<DraDriver, Rejected> rejected = new IdentityHashMap<>(); // guarded by lock
  private boolean closed; // guarded by lock
  private long startupDeadline; // guarded by lock
  private Scheduler.Task startupTimer; // guarded by lock
  private volatile Reflector<ResourceSlice> reflector; // set once by start, before any reader runs
  private Scheduler.Task resyncTimer; // guarded by lock
  private Thread worker; // guarded by lock

  /** The monitored registration of a driver and its last valid snapshot ({@code null} until the first one). */
  private static final class Active {
    final DriverMonitor monitor;
    List<Pool> pools;
    Instant lastSnapshot; // when the last valid snapshot came, for the status only
    String lastError; // the last stream or data error since then, for the status only
    List<Pool> refused; // the pools whose slices the server stored without gated fields: not written again

    Active(DriverMonitor monitor) {
      this.monitor = monitor;
    }
  }

  /** A driver service whose name the API would not accept; it is never monitored. */
  private record Rejected(String name, String error) {
  }

  /**
   * A driver that went away: its slices stay until the deadline, when the timer enqueues it. Then the slices the
   * controller wrote are deleted, and for a driver that published its own ({@code wipe}) all of them, as the kubelet
   * wipes the slices of a plugin that is gone.
   */
  private record Leaving(long deadline, Scheduler.Task timer, Instant lastSnapshot, String lastError, boolean wipe) {
  }

  private NodeResourcesController(Builder builder) {
    this.client = builder.client;
    this.ownReflectors = builder.reflectors == null ? ReflectorEngine.builder(client).build() : null;
    this.reflectors = builder.reflectors == null ? ownReflectors : builder.reflectors;
    this.serialization = client.getKubernetesSerialization();
    this.nodeName = builder.nodeName;
    this.nodeUid = builder.nodeUid;
    this.options = builder.options;
    this.random = builder.random;
    this.clock = builder.clock;
    this.metrics = builder.metrics;
    this.ownScheduler = builder.scheduler == null ? new ExecutorScheduler("nodelet-dra-timer") : null;
    this.scheduler = builder.scheduler == null ? ownScheduler : builder.scheduler;
    this.queue = new WorkQueue<>(new RateLimiter<>(options.rateLimitBaseDelay(), options.rateLimitMaxDelay(),
        options.rateLimitQps(), options.rateLimitBurst(), scheduler::nanoTime), scheduler);
  }

  public static Builder builder(KubernetesClient client, String nodeName) {
    return new Builder(client, nodeName);
  }

  /**
   * Starts the reflector on this node's slices and the worker; returns at once. Nothing is written before the
   * reflector has synced, and slices of drivers that are not registered stay for the grace period.
   */
  public void start() {
    synchronized (lock) {
      if (closed || reflector != null) {
        throw new IllegalStateException("the controller was started or closed already");
      }
      // the reflector retries until the API server answers (a node agent cannot give up) and logs the outage
      CompletableFuture<Void> synced = new CompletableFuture<>();
      reflector = reflectors.reflector(ResourceSlice.class).fieldSelector("spec.nodeName=" + nodeName)
          .listener(new SliceListener(synced)).start();
      scheduleResync();
      startupDeadline = scheduler.nanoTime() + options.gracePeriod().toNanos();
      startupTimer = scheduler.schedule(this::enqueueStoredDrivers, options.gracePeriod());
      worker = new Thread(() -> work(synced), "nodelet-dra-worker");
      worker.setDaemon(true);
      worker.start();
    }
    LOG.info("DRA node controller started for node {} ({})", nodeName, options);
  }

  /** A driver service appeared: it replaces an earlier registration of the same name and is monitored. */
  public void addDriver(DraDriver driver) {
    String name = null;
    try {
      name = driver.driverName();
      DriverDataValidator.validateDriverName(name);
    } catch (RuntimeException e) {
      String error = e instanceof InvalidDriverDataException ? e.getMessage()
          : "the driver service failed to tell its name: " + e;
      LOG.error("DRA driver service {} rejected: {}", driver, error);
      synchronized (lock) {
        if (!closed) {
          rejected.put(driver, new Rejected(name == null || name.isEmpty() ? "<no name>" : name, error));
        }
      }
      return;
    }
    if (driver.publishesOwnSlices()) {
      synchronized (lock) {
        if (!closed) {
          selfPublishing.computeIfAbsent(name, k -> new ArrayList<>()).add(driver);
          Leaving returned = leaving.remove(name);
          if (returned != null) {
            returned.timer().cancel();
          }
        }
      }
      LOG.info("DRA driver {} publishes its own ResourceSlices; the controller leaves them alone", name);
      return;
    }
    DriverMonitor replaced;
    DriverMonitor started;
    synchronized (lock) {
      if (closed) {
        return;
      }
      registered.computeIfAbsent(name, k -> new ArrayList<>()).add(driver);
      Active previous = active.get(name);
      replaced = previous == null ? null : previous.monitor;
      started = activate(name, driver);
    }
    if (replaced != null) {
      replaced.cancel();
    }
    started.start();
    queue.add(name);
  }

  /**
   * A driver service went away: its monitor stops; another registration of the name takes over, else its slices
   * are deleted after the grace period unless the driver returns first.
   */
  public void removeDriver(DraDriver driver) {
    synchronized (lock) {
      if (rejected.remove(driver) != null) {
        return;
      }
      String own = driver.driverName();
      List<DraDriver> publishing = selfPublishing.get(own);
      if (publishing != null && publishing.removeIf(d -> d == driver)) {
        if (publishing.isEmpty()) {
          selfPublishing.remove(own);
          // as the kubelet does: the slices of a driver that is gone are wiped after the grace period
          Duration grace = options.gracePeriod();
          leaving.put(own, new Leaving(scheduler.nanoTime() + grace.toNanos(),
              scheduler.schedule(() -> queue.add(own), grace), null, null, true));
          LOG.info("DRA driver {} went away; its own slices are deleted in {} s unless it returns", own,
              grace.toSeconds());
        }
        return;
      }
    }
    String name = driver.driverName();
    DriverMonitor stopped;
    DriverMonitor started = null;
    synchronized (lock) {
      List<DraDriver> registrations = registered.get(name);
      Active current = active.get(name);
      if (registrations == null || !registrations.removeIf(d -> d == driver)
          || current == null || current.monitor.driver() != driver) {
        return; // not registered, or not the monitored registration
      }
      active.remove(name);
      stopped = current.monitor;
      if (registrations.isEmpty()) {
        registered.remove(name);
        Duration grace = options.gracePeriod();
        leaving.put(name, new Leaving(scheduler.nanoTime() + grace.toNanos(),
            scheduler.schedule(() -> queue.add(name), grace), current.lastSnapshot, current.lastError, false));
        LOG.info("DRA driver {} went away; its slices are deleted in {} s unless it returns", name,
            grace.toSeconds());
      } else {
        started = activate(name, registrations.get(registrations.size() - 1));
      }
    }
    stopped.cancel();
    if (started != null) {
      started.start();
    }
    queue.add(name);
  }

  /** Why the last sync of each driver failed, until one succeeds; for health checks. */
  public Map<String, String> syncFailures() {
    return Map.copyOf(syncFailures);
  }

  /** The last error in the data of a driver (invalid snapshot), cleared by its next valid snapshot. */
  public Optional<String> driverError(String driverName) {
    synchronized (lock) {
      return Optional.ofNullable(errors.get(driverName));
    }
  }

  /** The name of the node whose slices this controller publishes. */
  public String nodeName() {
    return nodeName;
  }

  /**
   * What the controller knows of each driver now: the registered ones, those in their grace period after going
   * away, and those with slices in the reflector's cache that have not registered since the start (their start-up
   * grace period); ordered by name.
   */
  public List<DriverStatus> driverStatuses() {
    Reflector<ResourceSlice> cache = reflector;
    List<String> stored = cache == null ? List.of()
        : cache.list().stream().filter(NodeSlices::owned).map(NodeSlices::driverOf).distinct().toList();
    Map<String, DriverStatus> statuses = new TreeMap<>();
    synchronized (lock) {
      long now = scheduler.nanoTime();
      selfPublishing.keySet().forEach(name -> statuses.put(name, new DriverStatus(name,
          DriverStatus.State.SELF_PUBLISHING, Optional.empty(), Optional.empty(), Duration.ZERO, Duration.ZERO)));
      active.forEach((name, a) -> statuses.put(name, new DriverStatus(name, a.monitor.state(),
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
    }
    return List.copyOf(statuses.values());
  }

  /** This node's ResourceSlices in the reflector's cache, ordered by driver, pool and name; empty before start. */
  public List<SliceSummary> slices() {
    Reflector<ResourceSlice> cache = reflector;
    return cache == null ? List.of() : NodeSlices.summaries(cache.list());
  }

  private static Duration left(long deadline, long now) {
    return Duration.ofNanos(Math.max(0, deadline - now));
  }

  /** Stops monitors, timers, the worker and the reflector; published slices stay. Idempotent. */
  @Override
  public void close() {
    List<DriverMonitor> monitors = new ArrayList<>();
    Thread stoppedWorker;
    Reflector<ResourceSlice> stoppedReflector;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      active.values().forEach(a -> monitors.add(a.monitor));
      active.clear();
      registered.clear();
      rejected.clear();
      leaving.values().forEach(l -> l.timer().cancel());
      leaving.clear();
      selfPublishing.clear();
      if (startupTimer != null) {
        startupTimer.cancel();
      }
      if (resyncTimer != null) {
        resyncTimer.cancel();
      }
      stoppedWorker = worker;
      stoppedReflector = reflector;
    }
    monitors.forEach(DriverMonitor::cancel);
    queue.shutDown();
    if (stoppedWorker != null) {
      stoppedWorker.interrupt();
      try {
        stoppedWorker.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (stoppedReflector != null) {
      stoppedReflector.close(); // ends the watch at once, also one still in flight
    }
    if (ownReflectors != null) {
      ownReflectors.close();
    }
    if (ownScheduler != null) {
      ownScheduler.close();
    }
    LOG.info("DRA node controller for node {} stopped", nodeName);
  }

  private DriverMonitor activate(String name, DraDriver driver) {
    Leaving returned = leaving.remove(name);
    if (returned != null) {
      returned.timer().cancel();
      LOG.info("DRA driver {} returned within the grace period; its slices stay", name);
    }
    Backoff backoff = new Backoff(options.monitorBackoffInitial(), options.monitorBackoffMax(),
        options.monitorBackoffJitter(), random);
    DriverMonitor monitor = new DriverMonitor(driver, name, scheduler, backoff, sink);
    active.put(name, new Active(monitor));
    return monitor;
  }

  private void enqueueStoredDrivers() {
    reflector.list().stream().map(NodeSlices::driverOf).distinct().forEach(queue::add);
  }

  /** Every resync period, every driver with slices is synced again, so drift is repaired. */
  private void scheduleResync() {
    if (options.resyncPeriod().isZero()) {
      return;
    }
    resyncTimer = scheduler.schedule(() -> {
      synchronized (lock) {
        if (closed) {
          return;
        }
        scheduleResync();
      }
      if (reflector.isSynced()) {
        enqueueStoredDrivers();
      }
    }, options.resyncPeriod());
  }

  private void work(CompletableFuture<Void> synced) {
    try {
      synced.get();
      LOG.info("The ResourceSlices of node {} have synced", nodeName);
      for (String name = queue.take(); name != null; name = queue.take()) {
        process(name);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // closing
    } catch (ExecutionException e) {
      LOG.error("The ResourceSlices of node {} did not sync; nothing is published", nodeName, e);
    }
  }

  private void process(String name) {
    long start = System.nanoTime();
    boolean failed = true;
    try {
      sync(name);
      syncFailures.remove(name);
      failed = false;
      queue.forget(name);
    } catch (NodeNotKnownException e) {
      // usual at start-up, until NodeIdentity has seen the Node: no stack trace for it
      LOG.debug("DRA driver {} waits: {}", name, e.getMessage());
      syncFailures.put(name, String.valueOf(e.getMessage()));
      queue.addRateLimited(name);
    } catch (RuntimeException e) {
      // API errors and bugs alike (the kubelet recovers panics here): retry with rate limiting
      LOG.error("Syncing the ResourceSlices of DRA driver {} failed, retrying", name, e);
      syncFailures.put(name, e.getClass().getSimpleName() + ": " + e.getMessage());
      queue.addRateLimited(name);
    } finally {
      if (metrics.isPresent()) {
        metrics.get().synced(start, failed);
      }
      queue.done(name);
    }
  }

  private void sync(String name) {
    List<Pool> pools;
    boolean wipe = false; // else only the slices the controller wrote are its to change
    synchronized (lock) {
      if (selfPublishing.containsKey(name)) {
        return; // the driver writes these slices itself
      }
      Active current = active.get(name);
      if (current != null) {
        if (current.pools == null) {
          return; // no snapshot yet: what is published stays
        }
        if (current.refused == current.pools) {
          return; // reported once; a changed snapshot or a restart tries again
        }
        pools = current.pools;
      } else {
        Leaving left = leaving.get(name);
        long deadline = left == null ? startupDeadline : Math.max(startupDeadline, left.deadline());
        if (scheduler.nanoTime() - deadline < 0) {
          return; // within the grace period; a timer enqueues the driver at its end
        }
        wipe = left != null && left.wipe();
        leaving.remove(name);
        pools = List.of();
      }
    }
    boolean all = wipe;
    List<ResourceSlice> stored = ownWrites.overlay(name, reflector.list().stream()
        .filter(slice -> name.equals(NodeSlices.driverOf(slice)) && (all || NodeSlices.owned(slice))).toList());
    SlicePlan plan = SlicePlan.of(name, nodeName, pools, stored, options.maxDevicesPerSlice(), serialization);
    if (plan.isEmpty()) {
      LOG.debug("The ResourceSlices of DRA driver {} are in step", name);
      return;
    }
    var slices = client.resources(ResourceSlice.class);
    for (ResourceSlice update : plan.updates()) {
      ResourceSlice updated = slices.resource(update).update();
      metrics.ifPresent(DraMetrics::updated);
      ownWrites.written(updated);
      LOG.debug("Updated ResourceSlice {} of DRA driver {}", update.getMetadata().getName(), name);
      if (refused(name, pools, update.getSpec(), updated)) {
        return;
      }
    }
    for (ResourceSliceSpec spec : plan.creates()) {
      ResourceSlice created = slices.resource(newSlice(name, spec)).create();
      metrics.ifPresent(DraMetrics::created);
      ownWrites.written(created);
      LOG.debug("Created ResourceSlice {} of DRA driver {}", created.getMetadata().getName(), name);
      if (refused(name, pools, spec, created)) {
        return;
      }
    }
    for (ResourceSlice obsolete : plan.deletes()) {
      slices.withName(obsolete.getMetadata().getName()).delete();
      metrics.ifPresent(DraMetrics::deleted);
      ownWrites.deleted(obsolete);
      LOG.debug("Deleted ResourceSlice {} of DRA driver {}", obsolete.getMetadata().getName(), name);
    }
    LOG.info("Published DRA driver {}: {} slices updated, {} created, {} deleted", name, plan.updates().size(),
        plan.creates().size(), plan.deletes().size());
  }

  /**
   * Whether the server stored the slice without gated fields that were written; then the problem is logged and
   * shown once and this snapshot is not written again, which would go on forever.
   */
  private boolean refused(String name, List<Pool> pools, ResourceSliceSpec written, ResourceSlice stored) {
    String problem = DroppedFields.check(stored.getMetadata().getName(), written, stored.getSpec());
    if (problem == null) {
      return false;
    }
    String error = "driver \"" + name + "\": " + problem;
    synchronized (lock) {
      Active current = active.get(name);
      if (current != null && current.pools == pools) {
        current.refused = pools;
        current.lastError = error;
        errors.put(name, error);
      }
    }
    LOG.error("{}", error);
    return true;
  }

  private ResourceSlice newSlice(String driver, ResourceSliceSpec spec) {
    String uid = nodeUid.get().orElseThrow(() -> new NodeNotKnownException(
        "the UID of Node " + nodeName + " is not known yet, so a ResourceSlice cannot be owned by it"));
    return NodeSlices.newSlice(nodeName, uid, driver, spec);
  }

  /** Validates snapshots and hands them to the worker. */
  private final class MonitorSink implements DriverMonitor.Sink {

    @Override
    public void snapshot(DriverMonitor monitor, List<Pool> pools) {
      String name = monitor.driverName();
      List<Pool> copy;
      String error = null;
      try {
        DriverDataValidator.validate(name, pools);
        // a private, normalised copy: the driver keeps its objects, and equal content compares equal
        copy = pools.stream().map(p -> new Pool(p.name(), p.devices().stream().map(serialization::clone).toList(),
            p.sharedCounters().stream().map(serialization::clone).toList())).toList();
      } catch (InvalidDriverDataException e) {
        copy = null;
        error = e.getMessage();
      } catch (RuntimeException e) {
        // data the validator did not foresee (a broken model object, say) is rejected the same way
        copy = null;
        error = "driver \"" + name + "\" reported resources that cannot be read: " + e;
      }
      synchronized (lock) {
        Active current = active.get(name);
        if (current == null || current.monitor != monitor) {
          return;
        }
        if (error != null) {
          errors.put(name, error);
          current.lastError = error;
        } else if (copy.equals(current.refused)) {
          current.lastSnapshot = clock.instant(); // the same content the server cannot store: the error stays
        } else {
          errors.remove(name);
          current.pools = copy;
          current.lastSnapshot = clock.instant();
          current.lastError = null;
          current.refused = null;
        }
      }
      if (error != null) {
        LOG.error("Snapshot rejected, the published slices stay as they are: {}", error);
      } else {
        queue.add(name);
      }
    }

    @Override
    public void failed(DriverMonitor monitor, Throwable cause, boolean retryable) {
      synchronized (lock) {
        Active current = active.get(monitor.driverName());
        if (current != null && current.monitor == monitor) {
          current.lastError = String.valueOf(cause);
        }
      }
    }

    @Override
    public void ended(DriverMonitor monitor) {
      synchronized (lock) {
        Active current = active.get(monitor.driverName());
        if (current == null || current.monitor != monitor || current.pools != null) {
          return; // the last snapshot stays in force
        }
        current.pools = List.of(); // a driver that never reported has no resources
      }
      queue.add(monitor.driverName());
    }
  }

  /** Every event enqueues the slice's driver, as in the kubelet. */
  private final class SliceListener implements ReflectorListener<ResourceSlice> {
    private final CompletableFuture<Void> synced;
    private final AtomicInteger failures = new AtomicInteger();

    SliceListener(CompletableFuture<Void> synced) {
      this.synced = synced;
    }

    @Override
    public void onAdd(ResourceSlice slice) {
      queue.add(NodeSlices.driverOf(slice));
    }

    @Override
    public void onUpdate(ResourceSlice oldSlice, ResourceSlice newSlice) {
      queue.add(NodeSlices.driverOf(newSlice));
    }

    @Override
    public void onDelete(ResourceSlice slice) {
      ownWrites.forget(slice.getMetadata().getName());
      queue.add(NodeSlices.driverOf(slice));
    }

    @Override
    public void onSynced(String resourceVersion) {
      failures.set(0);
      synced.complete(null);
    }

    @Override
    public void onError(ReflectorException error) {
      // the reflector logs the outage; this line says what waits for it
      if (failures.incrementAndGet() == 1 && !synced.isDone()) {
        LOG.warn("The ResourceSlices of node {} are not published until the API server answers", nodeName);
      }
    }
  }

  /** Configures a {@link NodeResourcesController}. */
  public static final class Builder {
    private final KubernetesClient client;
    private final String nodeName;
    private Reflectors reflectors;
    private Supplier<Optional<String>> nodeUid = Optional::empty;
    private Scheduler scheduler;
    private ControllerOptions options = ControllerOptions.DEFAULTS;
    private DoubleSupplier random = () -> ThreadLocalRandom.current().nextDouble();
    private Clock clock = Clock.systemUTC();
    private Optional<DraMetrics> metrics = Optional.empty();

    private Builder(KubernetesClient client, String nodeName) {
      this.client = Objects.requireNonNull(client, "client");
      this.nodeName = Objects.requireNonNull(nodeName, "nodeName");
    }

    /** The list/watch machinery to watch the slices with; without it the controller runs its own. */
    public Builder reflectors(Reflectors reflectors) {
      this.reflectors = Objects.requireNonNull(reflectors, "reflectors");
      return this;
    }

    /** The UID of this node's Node object, for the owner reference of new slices; asked at every create. */
    public Builder nodeUid(Supplier<Optional<String>> nodeUid) {
      this.nodeUid = Objects.requireNonNull(nodeUid, "nodeUid");
      return this;
    }

    /** Time and timers; by default a thread of the controller's own, released by {@link #close()}. */
    public Builder scheduler(Scheduler scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    public Builder options(ControllerOptions options) {
      this.options = Objects.requireNonNull(options, "options");
      return this;
    }

    /** The random source of the monitor backoff's jitter, values in [0, 1). */
    public Builder random(DoubleSupplier random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /** The wall clock of the status's snapshot times; the system's by default. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** Where the controller counts its writes and syncs; none by default. */
    public Builder metrics(DraMetrics metrics) {
      this.metrics = Optional.of(metrics);
      return this;
    }

    public NodeResourcesController build() {
      return new NodeResourcesController(this);
    }
  }

  /** The Node's UID is not known yet, so nothing can be created that it owns; retried with rate limiting. */
  private static final class NodeNotKnownException extends IllegalStateException {
    NodeNotKnownException(String message) {
      super(message);
    }
  }
}
