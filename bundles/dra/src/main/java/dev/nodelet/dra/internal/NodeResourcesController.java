package dev.nodelet.dra.internal;

import dev.nodelet.controller.Backoff;
import dev.nodelet.controller.ExecutorScheduler;
import dev.nodelet.controller.RateLimiter;
import dev.nodelet.controller.Scheduler;
import dev.nodelet.controller.StreamMonitor;
import dev.nodelet.controller.WorkQueue;
import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.SelfPublishedSlices;
import dev.nodelet.dra.SliceSummary;
import dev.nodelet.dra.runtime.ControllerOptions;
import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.kube.watch.Reflectors;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the resources of the registered {@link DeviceSnapshots} drivers as {@code resource.k8s.io/v1}
 * ResourceSlices of one node: the kubelet's node resources controller ({@code noderesources.go}), on the v1 pool
 * model, with validation of driver data ({@link SnapshotSink}) and a grace period before the slices of a departed
 * driver are deleted. It changes only the slices it wrote ({@link NodeSlices}). This class keeps the registrations
 * ({@link DriverTable});
 * {@link SliceSync} writes the slices.
 *
 * <p>Threads: one worker ({@link SliceSync}) syncs one driver at a time from a {@link WorkQueue}; the
 * {@link Scheduler} runs timers, monitor retries and the resync; the reflector delivers on the shared reflector
 * threads. {@link #close()} ends all of them and leaves the published slices in place (the start-up grace period of
 * the next start covers them).
 */
public final class NodeResourcesController implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(NodeResourcesController.class);
  private final Reflectors reflectors;
  private final ReflectorEngine ownReflectors;
  private final String nodeName;
  private final Scheduler scheduler;
  private final ExecutorScheduler ownScheduler;
  private final ControllerOptions options;
  private final DoubleSupplier random;
  private final WorkQueue<String> queue;
  private final OwnWrites ownWrites = new OwnWrites();
  private final DriverTable table = new DriverTable(); // the lock of the fields below as well
  private final SnapshotSink sink;
  private final SliceSync sync;
  private Scheduler.Task startupTimer; // guarded by table
  private volatile Reflector<ResourceSlice> reflector; // set once by start, before any reader runs
  private Scheduler.Task resyncTimer; // guarded by table
  private Thread worker; // guarded by table

  private NodeResourcesController(Builder builder) {
    KubernetesClient client = builder.client;
    this.ownReflectors = builder.reflectors == null ? ReflectorEngine.builder(client).build() : null;
    this.reflectors = builder.reflectors == null ? ownReflectors : builder.reflectors;
    this.nodeName = builder.nodeName;
    this.options = builder.options;
    this.random = builder.random;
    this.ownScheduler = builder.scheduler == null ? new ExecutorScheduler("nodelet-dra-timer") : null;
    this.scheduler = builder.scheduler == null ? ownScheduler : new ApiScheduler(builder.scheduler);
    // client-go's DefaultControllerRateLimiter, with the figures of the options
    this.queue = new WorkQueue<>(RateLimiter.controller(options.rateLimitBaseDelay(), options.rateLimitMaxDelay(),
        options.rateLimitQps(), options.rateLimitBurst(), scheduler::nanoTime), scheduler);
    this.sink = new SnapshotSink(table, queue, client.getKubernetesSerialization(), builder.clock);
    this.sync = new SliceSync(client, nodeName, builder.nodeUid, table, queue, scheduler, ownWrites,
        builder.metrics, options.maxDevicesPerSlice());
  }

  public static Builder builder(KubernetesClient client, String nodeName) {
    return new Builder(client, nodeName);
  }

  /**
   * Starts the reflector on this node's slices and the worker; returns at once. Nothing is written before the
   * reflector has synced, and slices of drivers that are not registered stay for the grace period.
   */
  public void start() {
    synchronized (table) {
      if (table.closed || reflector != null) {
        throw new IllegalStateException("the controller was started or closed already");
      }
      // the reflector retries until the API server answers (a node agent cannot give up) and logs the outage
      CompletableFuture<Void> synced = new CompletableFuture<>();
      reflector = reflectors.reflector(ResourceSlice.class).fieldSelector("spec.nodeName=" + nodeName)
          .listener(new SliceEvents(nodeName, queue, ownWrites, synced)).start();
      scheduleResync();
      table.startupDeadline = scheduler.nanoTime() + options.gracePeriod().toNanos();
      startupTimer = scheduler.schedule(this::enqueueStoredDrivers, options.gracePeriod());
      Reflector<ResourceSlice> slices = reflector;
      worker = new Thread(() -> sync.work(slices, synced), "nodelet-dra-worker");
      worker.setDaemon(true);
      worker.start();
    }
    LOG.info("DRA node controller started for node {} ({})", nodeName, options);
  }

  /** A driver service appeared: it replaces an earlier registration of the same name and is monitored. */
  public void addDriver(DeviceSnapshots driver) {
    String name = validName(driver, driver::driverName);
    if (name == null) {
      return;
    }
    StreamMonitor replaced;
    StreamMonitor started;
    synchronized (table) {
      if (table.closed) {
        return;
      }
      table.registered.computeIfAbsent(name, k -> new ArrayList<>()).add(driver);
      DriverTable.Active previous = table.active.get(name);
      replaced = previous == null ? null : previous.monitor;
      started = activate(name, driver);
    }
    if (replaced != null) {
      replaced.stop();
    }
    started.start();
    queue.add(name);
  }

  /**
   * A driver service went away: its monitor stops; another registration of the name takes over, else its slices
   * are deleted after the grace period unless the driver returns first.
   */
  public void removeDriver(DeviceSnapshots driver) {
    synchronized (table) {
      if (table.rejected.remove(driver) != null) {
        return;
      }
    }
    String name = driver.driverName();
    StreamMonitor stopped;
    StreamMonitor started = null;
    synchronized (table) {
      List<DeviceSnapshots> registrations = table.registered.get(name);
      DriverTable.Active current = table.active.get(name);
      if (registrations == null || !registrations.removeIf(d -> d == driver)
          || current == null || current.driver != driver) {
        return; // not registered, or not the monitored registration
      }
      table.active.remove(name);
      stopped = current.monitor;
      if (registrations.isEmpty()) {
        table.registered.remove(name);
        Duration grace = options.gracePeriod();
        table.leaving.put(name, new DriverTable.Leaving(scheduler.nanoTime() + grace.toNanos(),
            scheduler.schedule(() -> queue.add(name), grace), current.lastSnapshot, current.lastError, false));
        LOG.info("DRA driver {} went away; its slices are deleted in {} s unless it returns", name,
            grace.toSeconds());
      } else {
        started = activate(name, registrations.get(registrations.size() - 1));
      }
    }
    stopped.stop();
    if (started != null) {
      started.start();
    }
    queue.add(name);
  }

  /** A driver that writes its own slices appeared: the controller leaves them alone while it is registered. */
  public void addSelfPublished(SelfPublishedSlices driver) {
    String name = validName(driver, driver::driverName);
    if (name == null) {
      return;
    }
    synchronized (table) {
      if (table.closed) {
        return;
      }
      table.selfPublishing.computeIfAbsent(name, k -> new ArrayList<>()).add(driver);
      DriverTable.Leaving returned = table.leaving.remove(name);
      if (returned != null) {
        returned.timer().cancel();
      }
    }
    LOG.info("DRA driver {} publishes its own ResourceSlices; the controller leaves them alone", name);
  }

  /**
   * A driver that writes its own slices went away: when it was the last registration of its name, its slices are
   * deleted after the grace period unless it returns first.
   */
  public void removeSelfPublished(SelfPublishedSlices driver) {
    synchronized (table) {
      if (table.rejected.remove(driver) != null) {
        return;
      }
      String own = driver.driverName();
      List<SelfPublishedSlices> publishing = table.selfPublishing.get(own);
      if (publishing == null || !publishing.removeIf(d -> d == driver) || !publishing.isEmpty()) {
        return;
      }
      table.selfPublishing.remove(own);
      if (table.closed) {
        return;
      }
      // as the kubelet does: the slices of a driver that is gone are wiped after the grace period
      Duration grace = options.gracePeriod();
      table.leaving.put(own, new DriverTable.Leaving(scheduler.nanoTime() + grace.toNanos(),
          scheduler.schedule(() -> queue.add(own), grace), null, null, true));
      LOG.info("DRA driver {} went away; its own slices are deleted in {} s unless it returns", own,
          grace.toSeconds());
    }
  }

  /** The driver's name if the API accepts it; else the service is remembered as rejected and null returned. */
  private String validName(Object service, Supplier<String> driverName) {
    String name = null;
    try {
      name = driverName.get();
      DriverDataValidator.validateDriverName(name);
      return name;
    } catch (RuntimeException e) {
      String error = e instanceof InvalidDriverDataException ? e.getMessage()
          : "the driver service failed to tell its name: " + e;
      LOG.error("DRA driver service {} rejected: {}", service, error);
      synchronized (table) {
        if (!table.closed) {
          String shown = name == null || name.isEmpty() ? "<no name>" : name;
          table.rejected.put(service, new DriverTable.Rejected(shown, error));
        }
      }
      return null;
    }
  }

  /** Why the last sync of each driver failed, until one succeeds; for health checks. */
  public Map<String, String> syncFailures() {
    return sync.syncFailures();
  }

  /** The last error in the data of a driver (invalid snapshot), cleared by its next valid snapshot. */
  public Optional<String> driverError(String driverName) {
    synchronized (table) {
      return Optional.ofNullable(table.errors.get(driverName));
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
    synchronized (table) {
      return table.statuses(stored, scheduler.nanoTime());
    }
  }

  /** This node's ResourceSlices in the reflector's cache, ordered by driver, pool and name; empty before start. */
  public List<SliceSummary> slices() {
    Reflector<ResourceSlice> cache = reflector;
    return cache == null ? List.of() : NodeSlices.summaries(cache.list());
  }

  /** Stops monitors, timers, the worker and the reflector; published slices stay. Idempotent. */
  @Override
  public void close() {
    List<StreamMonitor> monitors = new ArrayList<>();
    Thread stoppedWorker;
    Reflector<ResourceSlice> stoppedReflector;
    synchronized (table) {
      if (table.closed) {
        return;
      }
      table.closed = true;
      table.active.values().forEach(a -> monitors.add(a.monitor));
      table.active.clear();
      table.registered.clear();
      table.rejected.clear();
      table.leaving.values().forEach(l -> l.timer().cancel());
      table.leaving.clear();
      table.selfPublishing.clear();
      if (startupTimer != null) {
        startupTimer.cancel();
      }
      if (resyncTimer != null) {
        resyncTimer.cancel();
      }
      stoppedWorker = worker;
      stoppedReflector = reflector;
    }
    monitors.forEach(StreamMonitor::stop);
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

  private StreamMonitor activate(String name, DeviceSnapshots driver) {
    DriverTable.Leaving returned = table.leaving.remove(name);
    if (returned != null) {
      returned.timer().cancel();
      LOG.info("DRA driver {} returned within the grace period; its slices stay", name);
    }
    // client-go's flowcontrol.Backoff as the kubelet monitors a plugin: forgotten after twice the cap without failures
    Backoff backoff = Backoff.exponential(options.monitorBackoffInitial(), options.monitorBackoffMax())
        .jitter(options.monitorBackoffJitter(), random).forgetAfterIdle(options.monitorBackoffMax().multipliedBy(2))
        .build();
    StreamMonitor monitor = sink.monitor(name, driver, scheduler, backoff);
    table.active.put(name, new DriverTable.Active(driver, monitor));
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
      synchronized (table) {
        if (table.closed) {
          return;
        }
        scheduleResync();
      }
      if (reflector.isSynced()) {
        enqueueStoredDrivers();
      }
    }, options.resyncPeriod());
  }

  /** Configures a {@link NodeResourcesController}. */
  public static final class Builder {
    private final KubernetesClient client;
    private final String nodeName;
    private Reflectors reflectors;
    private Supplier<Optional<String>> nodeUid = Optional::empty;
    private dev.nodelet.dra.runtime.Scheduler scheduler;
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
    public Builder scheduler(dev.nodelet.dra.runtime.Scheduler scheduler) {
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
}
