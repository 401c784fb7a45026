package dev.nodelet.pods.internal;

import dev.nodelet.pods.PodBundles;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.BundleListener;
import org.osgi.framework.ServiceRegistration;
import org.osgi.framework.hooks.bundle.CollisionHook;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs this node's pods as bundles. The pod source's calls ({@link #podUpdated}, {@link #podRemoved}), bundle
 * events and changes of referenced ConfigMaps and Secrets only queue the pod; all work happens on one executor
 * thread, one pod at a time: admission, delivery ({@link PodDelivery}), each container's step
 * ({@link ContainerSteps}), deletion, and the status, handed to the {@link StatusWriter} only when it changed (it
 * writes off this thread, the newest status winning; a pod's deletion waits for its last status to be written).
 * Bundles installed for a pod before (found by their location) are adopted, not installed again. Closing leaves the
 * pods' bundles running, so that the next start adopts them.
 */
final class PodRuntime implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(PodRuntime.class);
  private static final Duration RETRY = Duration.ofSeconds(1);
  private static final int WRITES_IN_FLIGHT = 3; // HTTP/2 streams on the client's one connection
  private static final Duration MISSING_OBJECT_RETRY = Duration.ofSeconds(10);

  private final BundleContext context;
  private final PodApi api;
  private final PodDelivery delivery;
  private final ContainerSteps steps;
  private final PodEvents events;
  private final Clock clock;
  private final ScheduledExecutorService executor;
  private final StatusWriter writer;
  private final String nodeName;
  private final int defaultCapacity;
  private final Map<String, Pod> latest = new ConcurrentHashMap<>(); // from the pod source; absent: removed
  private final Set<String> queued = ConcurrentHashMap.newKeySet();
  private final Map<String, PodState> pods = new HashMap<>(); // executor only
  private final Map<String, String> released = new HashMap<>(); // executor only; key to the UID deleted by Nodelet
  private final BundleListener bundles = this::bundleChanged;
  private final ServiceRegistration<CollisionHook> collisions;
  private String hostIp; // executor only

  PodRuntime(BundleContext context, PodApi api, PodDelivery delivery, ImageSource images, Clock clock,
      ScheduledExecutorService executor, String nodeName, int defaultCapacity) {
    this(context, api, delivery, images, clock, executor, nodeName, defaultCapacity, PodEvents.NONE);
  }

  PodRuntime(BundleContext context, PodApi api, PodDelivery delivery, ImageSource images, Clock clock,
      ScheduledExecutorService executor, String nodeName, int defaultCapacity, PodEvents events) {
    this.context = context;
    this.events = events;
    this.api = api;
    this.delivery = delivery;
    this.steps = new ContainerSteps(context, images, events);
    this.clock = clock;
    this.executor = executor;
    this.nodeName = nodeName;
    this.defaultCapacity = defaultCapacity;
    this.writer = new StatusWriter(api, dev.nodelet.controller.ExecutorScheduler.on(executor, "nodelet-pods"),
        this::execute, this::writeFoundGone, WRITES_IN_FLIGHT);
    context.addBundleListener(bundles);
    // the framework refuses a second bundle of the same symbolic name and version unless a hook lets it: pods that
    // run the same artifact each get their own bundle
    Bundle installer = context.getBundle();
    this.collisions = context.registerService(CollisionHook.class, (operation, target, candidates) -> {
      if (target.getBundleId() == installer.getBundleId()) {
        candidates.removeIf(b -> b.getLocation().startsWith(PodBundles.LOCATION_SCHEME));
      }
    }, null);
  }

  /** The pod source's news: never blocks. */
  void podUpdated(Pod pod) {
    if (pod.getMetadata() == null || pod.getSpec() == null || pod.getSpec().getContainers() == null) {
      return;
    }
    String key = key(pod);
    latest.put(key, pod);
    submit(key);
  }

  /** The pod left this node (deleted, or gone while the node was away): never blocks. */
  void podRemoved(Pod pod) {
    String key = key(pod);
    Pod known = latest.get(key);
    if (known != null && known.getMetadata().getUid() != null
        && !known.getMetadata().getUid().equals(pod.getMetadata().getUid())) {
      return; // another pod under that name now
    }
    latest.remove(key);
    execute(() -> released.remove(key));
    submit(key);
  }

  /** A referenced ConfigMap or Secret changed: the pods that use it deliver it again. Never blocks. */
  void objectChanged(boolean secret, String namespace, String name) {
    execute(() -> pods.values().stream()
        .filter(p -> p.namespace().equals(namespace) && (secret ? p.secrets : p.configMaps).contains(name))
        .forEach(p -> sync(p.key)));
  }

  private void bundleChanged(BundleEvent event) {
    String location = event.getBundle().getLocation();
    if (location.startsWith(PodBundles.LOCATION_SCHEME)
        && (event.getType() == BundleEvent.STOPPED || event.getType() == BundleEvent.UNINSTALLED)) {
      String[] parts = location.substring(PodBundles.LOCATION_SCHEME.length()).split("/");
      if (parts.length == 3) {
        submit(parts[0] + "/" + parts[1]);
      }
    }
  }

  /** Queues a sync of the pod, once however often it is asked for before it runs. */
  void submit(String key) {
    if (queued.add(key)) {
      execute(() -> {
        queued.remove(key);
        sync(key);
      });
    }
  }

  private void execute(Runnable task) {
    try {
      executor.execute(() -> {
        try {
          task.run();
        } catch (RuntimeException e) {
          LOG.error("Pod work failed", e);
        }
      });
    } catch (RejectedExecutionException e) {
      // closing
    }
  }

  /**
   * Removes, once this node's pods are listed, the bundles, configurations and folders of pods Nodelet no longer
   * knows: pods deleted while it was not running. Checks every {@code period} until {@code listed} holds, then
   * waits {@code settle} more for the pod source to hand over what it listed, then sweeps once.
   *
   * @param listed whether the pod source has listed this node's pods and handed them to its listeners
   * @param period how often to check
   * @param settle how long to wait after the pods are listed
   */
  void sweepWhenListed(java.util.function.BooleanSupplier listed, Duration period, Duration settle) {
    try {
      executor.schedule(() -> {
        if (!listed.getAsBoolean()) {
          sweepWhenListed(listed, period, settle);
        } else {
          executor.schedule(() -> execute(this::sweep), settle.toMillis(), TimeUnit.MILLISECONDS);
        }
      }, period.toMillis(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // closing
    }
  }

  private void sweep() {
    Set<String> uids = new java.util.HashSet<>();
    latest.values().forEach(p -> uids.add(p.getMetadata().getUid()));
    pods.values().forEach(p -> uids.add(p.uid));
    for (Bundle bundle : context.getBundles()) {
      String location = bundle.getLocation();
      if (!location.startsWith(PodBundles.LOCATION_SCHEME)) {
        continue;
      }
      String[] parts = location.substring(PodBundles.LOCATION_SCHEME.length()).split("/");
      String key = parts.length == 3 ? parts[0] + "/" + parts[1] : "";
      if (latest.containsKey(key) || pods.containsKey(key)) {
        continue;
      }
      LOG.info("Bundle {} of pod {} that is no longer on this node: removing it", bundle.getBundleId(), key);
      ContainerRun orphan = new ContainerRun(parts.length == 3 ? parts[2] : "", "", location);
      steps.remove(null, orphan, clock.instant());
      delivery.removeConfigurations(location);
    }
    delivery.removeFoldersExcept(uids);
  }

  /** For tests: whether a status write of the pod failed and waits for its retry. */
  boolean writePending(String key) throws Exception {
    java.util.concurrent.CompletableFuture<Boolean> answer = new java.util.concurrent.CompletableFuture<>();
    execute(() -> answer.complete(pods.containsKey(key) && writer.retrying(pods.get(key).uid)));
    return answer.get(30, TimeUnit.SECONDS);
  }

  /**
   * For tests: waits until the work queued so far is done, and the status writes it queued (retries waiting for
   * their back-off aside), and the work their outcomes brought.
   */
  boolean awaitIdle(Duration timeout) throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (true) {
      boolean quiet = writer.quiet(); // before the drain: an outcome handed over before is drained by it
      CountDownLatch done = new CountDownLatch(1);
      execute(done::countDown);
      if (!done.await(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS)) {
        return false;
      }
      if (quiet && writer.quiet()) {
        return true;
      }
      if (!writer.awaitQuiet(Duration.ofNanos(Math.max(0, end - System.nanoTime())))) {
        return false;
      }
    }
  }

  private void sync(String key) {
    Pod pod = latest.get(key);
    PodState state = pods.get(key);
    Instant now = clock.instant();
    if (state != null && (pod == null || !state.uid.equals(pod.getMetadata().getUid()))) {
      teardown(state, now); // gone from the node, or replaced by another pod of that name
      pods.remove(key);
      state = null;
    }
    if (pod == null) {
      return;
    }
    if (state == null && pod.getMetadata().getUid().equals(released.get(key))) {
      return; // released by Nodelet: the pod source has not seen the deletion yet
    }
    if (state == null) {
      state = take(key, pod, now);
      if (state == null) {
        return;
      }
    }
    state.pod = pod;
    state.references(pod);
    if (state.rejection != null) {
      if (pod.getMetadata().getDeletionTimestamp() != null) {
        releaseWhenWritten(state); // after its Failed status
      }
      return;
    }
    if (pod.getMetadata().getDeletionTimestamp() != null) {
      terminate(state, now);
      return;
    }
    imagesChanged(state, now);
    state.hostIp = hostIp;
    state.readyToStart = delivery.prepare(state, now);
    String mountProblem = state.readyToStart ? null : delivery.volumeProblem(state.key);
    if (mountProblem != null) {
      events.warning(pod, null, "FailedMount", mountProblem);
    }
    for (ContainerRun c : state.containers) {
      Map<String, Object> properties = delivery.properties(state, c);
      if (properties != null) {
        PodState current = state;
        steps.step(state, c, now, bundle -> delivery.deliver(current, c, bundle, properties));
      } else if (c.state == ContainerRun.State.RUNNING) {
        steps.step(state, c, now, bundle -> true); // keeps its last configuration; a stop is still noticed
      } else if ("CreateContainerConfigError".equals(c.reason)) {
        events.warning(pod, c.name, "Failed", "Error: " + c.message); // names the object or key, never a value
      }
    }
    write(state, now);
    schedule(state, now);
  }

  /**
   * A container whose image changed (the one field of a container that may change) is stopped, and its new image
   * installed in place, as the kubelet restarts a container whose definition changed.
   */
  private void imagesChanged(PodState state, Instant now) {
    for (int i = 0; i < state.containers.size(); i++) {
      ContainerRun c = state.containers.get(i);
      String image = state.spec(c).getImage();
      if (java.util.Objects.equals(image, c.image)) {
        continue;
      }
      LOG.info("Container {}: its image changed to {}, replacing its bundle", c.location, image);
      boolean ran = c.state == ContainerRun.State.RUNNING;
      steps.remove(state, c, now);
      delivery.removeConfigurations(c.location);
      ContainerRun next = new ContainerRun(c.name, image, c.location);
      if (ran || c.state == ContainerRun.State.TERMINATED) {
        c.keepTermination();
      }
      next.lastState = c.lastState;
      next.restartCount = c.restartCount;
      next.startedOnce = c.startedOnce;
      state.containers.set(i, next);
    }
  }

  /** A pod seen for the first time: adopt its bundles, or admit it; null for a finished pod to leave alone. */
  private PodState take(String key, Pod pod, Instant now) {
    PodState state = new PodState(key, pod, now);
    state.lastWritten = pod.getStatus(); // what the API server has: an unchanged status is not written again
    boolean adopted = false;
    for (ContainerRun c : state.containers) {
      Bundle bundle = context.getBundle(c.location);
      if (bundle != null) {
        Adoption.adopt(pod, c, bundle, now);
        adopted = true;
      }
    }
    String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    if (!adopted && ("Succeeded".equals(phase) || "Failed".equals(phase))) {
      if (pod.getMetadata().getDeletionTimestamp() != null) {
        api.delete(pod); // a finished pod being deleted: nothing to stop
      }
      return null;
    }
    if (adopted && hostIp == null) {
      hostIp = Adoption.address(api.node(nodeName)).orElse(null);
    }
    if (!adopted && pod.getMetadata().getDeletionTimestamp() == null) {
      Node node = api.node(nodeName);
      hostIp = Adoption.address(node).orElse(hostIp);
      java.util.List<Pod> active = pods.values().stream().filter(PodState::active).map(p -> p.pod).toList();
      Optional<Admission.Rejection> rejection = Admission.admit(pod, active, Adoption.capacity(node, defaultCapacity),
          node);
      if (rejection.isPresent()) {
        state.rejection = rejection.get();
        LOG.info("Pod {} rejected: {} {}", key, rejection.get().reason(), rejection.get().message());
        PodStatus failed = new PodStatusBuilder().withPhase("Failed").withReason(rejection.get().reason())
            .withMessage(rejection.get().message()).withStartTime(Times.format(state.startTime)).build();
        writer.write(pod, failed);
        state.lastWritten = failed;
      }
    }
    pods.put(key, state);
    return state;
  }

  /** Deletion: stop and uninstall, record the terminations, clean up, then release the pod object. */
  private void terminate(PodState state, Instant now) {
    if (!state.deleted) {
      steps.removeAll(state, state.containers, now, BoundedStop.grace(state.pod)); // bounded by the grace
      for (ContainerRun c : state.containers) {
        if (c.state == ContainerRun.State.WAITING) {
          c.terminated(now, 0, null);
        }
      }
      delivery.remove(state);
      state.deleted = true;
      boolean failed = state.containers.stream().anyMatch(c -> c.exitCode != 0);
      PodStatus status = new PodStatusBuilder(StatusComposer.compose(state.pod, state.containers, false, hostIp,
          state.startTime, now, state.lastWritten)).withPhase(failed ? "Failed" : "Succeeded").build();
      if (!StatusWriter.same(status, state.lastWritten)) {
        writer.write(state.pod, status);
        state.lastWritten = status;
      }
    }
    releaseWhenWritten(state);
  }

  /** Deletes the pod object once its last status is written: the kubelet's order. Once however often asked. */
  private void releaseWhenWritten(PodState state) {
    if (state.releasing) {
      return;
    }
    state.releasing = true;
    writer.whenWritten(state.uid, () -> {
      state.releasing = false;
      if (pods.get(state.key) == state) {
        release(state);
      }
    });
  }

  private void release(PodState state) {
    PodApi.Outcome outcome = api.delete(state.pod);
    if (outcome == PodApi.Outcome.RETRY) {
      later(state, RETRY);
    } else {
      LOG.info("Pod {} released", state.key);
      pods.remove(state.key);
      released.put(state.key, state.uid);
      writer.forget(state.uid);
    }
  }

  /** A status write found the pod gone or replaced: it left the node (unless it is being deleted anyway). */
  private void writeFoundGone(String uid) {
    pods.values().stream().filter(p -> p.uid.equals(uid) && !p.deleted).findFirst().ifPresent(state -> {
      teardown(state, clock.instant());
      pods.remove(state.key);
    });
  }

  /** The pod left the node: its bundles, configurations and files go; nothing is written. */
  private void teardown(PodState state, Instant now) {
    if (state.timer != null) {
      state.timer.cancel(false);
    }
    steps.removeAll(null, state.containers, now, BoundedStop.grace(state.pod)); // no events: the pod is gone
    delivery.remove(state);
    writer.forget(state.uid);
    LOG.info("Pod {} (uid {}) left the node", state.key, state.uid);
  }

  /** Hands the writer the pod's status if it changed since the last one handed over. */
  private void write(PodState state, Instant now) {
    PodStatus status = StatusComposer.compose(state.pod, state.containers, state.readyToStart, hostIp,
        state.startTime, now, state.lastWritten);
    if (!StatusWriter.same(status, state.lastWritten)) {
      writer.write(state.pod, status);
      state.lastWritten = status;
    }
  }

  /** The next sync a back-off or an unfinished step needs. */
  private void schedule(PodState state, Instant now) {
    Instant next = null;
    for (ContainerRun c : state.containers) {
      if (c.state == ContainerRun.State.WAITING) {
        Instant at;
        if ("ErrImagePull".equals(c.reason)
            || ("ContainerCreating".equals(c.reason) && (c.message == null || PodDevices.retrySoon(c.message)))) {
          at = now.plus(RETRY); // soon: ImagePullBackOff to show, the managers to register the pod, claims prepared
        } else if ("ContainerCreating".equals(c.reason) || "CreateContainerConfigError".equals(c.reason)) {
          at = now.plus(MISSING_OBJECT_RETRY); // a missing object's arrival also comes as a watch event
        } else {
          at = c.retryAt();
        }
        if (at.isAfter(now) && (next == null || at.isBefore(next))) {
          next = at;
        }
      }
    }
    if (next != null) {
      later(state, Duration.between(now, next));
    }
  }

  private void later(PodState state, Duration delay) {
    if (state.timer != null) {
      state.timer.cancel(false);
    }
    try {
      state.timer = executor.schedule(() -> submit(state.key), Math.max(1, delay.toMillis()), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // closing
    }
  }

  static String key(Pod pod) {
    return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
  }

  /** @return the pods as shells show them, copied on the executor ({@link PodsSnapshot}) */
  java.util.List<dev.nodelet.pods.PodInfo> status() {
    return PodsSnapshot.read(executor, pods.values(), context);
  }

  /** Stops the work; the pods' bundles keep running for the next start to adopt. */
  @Override
  public void close() {
    context.removeBundleListener(bundles);
    try {
      collisions.unregister();
    } catch (IllegalStateException e) {
      // the bundle is stopping: gone already
    }
    executor.shutdownNow();
    try {
      executor.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    writer.close();
    api.close();
    steps.close();
    events.close();
  }
}
