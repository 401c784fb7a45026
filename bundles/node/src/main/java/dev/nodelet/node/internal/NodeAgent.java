package dev.nodelet.node.internal;

import dev.nodelet.controller.Backoff;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node as a kubelet keeps it, in plain Java: registration with back-off ({@value #REGISTRATION_INITIAL_MS} ms
 * doubling to 7 s), then the status every {@link #STATUS_INTERVAL} and the Lease, renewed every
 * {@link #LEASE_INTERVAL} (a quarter of its duration), retried after a failure after 200 ms doubling to 7 s. The
 * kubelet starts its Lease without waiting for the Node; here it waits (<b>Nodelet</b>), so that a Node this agent
 * refused to adopt never has its Lease renewed by it. Time
 * comes from a {@link Clock} and a {@link Timer}, so tests drive it. {@link #close()} stops every loop.
 */
final class NodeAgent implements AutoCloseable {

  static final long REGISTRATION_INITIAL_MS = 100;
  static final Duration BACKOFF_MAX = Duration.ofSeconds(7);
  static final Duration LEASE_INTERVAL = Duration.ofSeconds(NodeLease.DURATION_SECONDS / 4);
  static final Duration LEASE_RETRY_INITIAL = Duration.ofMillis(200);
  /** The kubelet's {@code nodeStatusUpdateFrequency}. */
  static final Duration STATUS_INTERVAL = Duration.ofSeconds(10);

  private static final Logger LOG = LoggerFactory.getLogger(NodeAgent.class);

  private final String nodeName;
  private final Clock clock;
  private final Timer timer;
  private final NodeRegistration registration;
  private final NodeLease lease;
  private final NodeStatusReporter status;
  // doubling after each failure up to the cap, from the initial delay again after a success
  private final Backoff registrationBackoff =
      Backoff.exponential(Duration.ofMillis(REGISTRATION_INITIAL_MS), BACKOFF_MAX).build();
  private final Backoff leaseBackoff = Backoff.exponential(LEASE_RETRY_INITIAL, BACKOFF_MAX).build();
  private final Map<String, Timer.Cancellable> pending = new HashMap<>(); // guarded by this
  private boolean closed; // guarded by this
  private volatile String nodeUid; // from the registration
  private volatile Node registered; // as the registration left it
  private volatile Instant renewed; // the last renewal of the Lease
  private volatile String problem = "not registered yet";
  // failures in a row, so that a long outage is logged once, not on every retry
  private int registrationFailures;
  private int leaseFailures;
  private int statusFailures;

  private NodeAgent(Builder builder) {
    this.nodeName = builder.identity.nodeName();
    this.clock = builder.clock;
    this.timer = builder.timer;
    NodeStatusReporter reporter = new NodeStatusReporter(builder.client, builder.identity, builder.settings,
        builder.facts, builder.notReady, builder.clock);
    this.status = reporter;
    this.registration = new NodeRegistration(builder.client, builder.identity, builder.settings,
        builder.facts.get(), () -> NodeObjects.initial(builder.identity, builder.settings, builder.facts.get(),
            reporter.desired(null)));
    // the watched UID first: a Node deleted and created again by someone else has a new one
    Supplier<Optional<String>> knownUid = builder.nodeUid;
    this.lease = new NodeLease(builder.client, nodeName, builder.clock,
        () -> knownUid.get().or(() -> Optional.ofNullable(nodeUid)));
  }

  /** The agent's time for its back-offs, from its clock, so that tests drive both. */
  private long nanoTime() {
    Instant now = clock.instant();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  static Builder builder(KubernetesClient client, NodeObjects.Identity identity, NodeSettings settings,
      Supplier<HostFacts> facts) {
    return new Builder(client, identity, settings, facts);
  }

  /** Starts registering; the Lease and the status follow. */
  void start() {
    schedule("registration", this::register, Duration.ZERO);
  }

  private void register() {
    Node node;
    try {
      node = registration.register();
    } catch (RuntimeException e) {
      Duration delay = registrationBackoff.failed(nanoTime());
      problem = "node " + nodeName + " not registered: " + e.getMessage();
      if (registrationFailures++ == 0) {
        LOG.warn("Node {} could not be registered, retrying with back-off up to {} s: {}", nodeName,
            BACKOFF_MAX.toSeconds(), e.getMessage());
      } else {
        LOG.debug("Node {} could not be registered, retrying in {} ms: {}", nodeName, delay.toMillis(),
            e.getMessage());
      }
      schedule("registration", this::register, delay);
      return;
    }
    registered = node;
    nodeUid = node.getMetadata().getUid();
    registrationBackoff.reset();
    problem = null;
    schedule("lease", this::renewLease, Duration.ZERO);
    schedule("status", this::updateStatus, Duration.ZERO);
  }

  private void renewLease() {
    Duration next = LEASE_INTERVAL;
    try {
      lease.renew();
      renewed = clock.instant();
      leaseBackoff.reset();
      if (leaseFailures > 0) {
        LOG.info("Lease {}/{} renewed again after {} failed attempts", NodeLease.NAMESPACE, nodeName,
            leaseFailures);
      }
      leaseFailures = 0;
    } catch (RuntimeException e) {
      next = leaseBackoff.failed(nanoTime());
      if (leaseFailures++ == 0) {
        LOG.warn("Lease {}/{} could not be renewed, retrying after {} ms doubling to {} s: {}", NodeLease.NAMESPACE,
            nodeName, next.toMillis(), BACKOFF_MAX.toSeconds(), e.getMessage());
      } else {
        LOG.debug("Lease {}/{} could not be renewed, retrying in {} ms: {}", NodeLease.NAMESPACE, nodeName,
            next.toMillis(), e.getMessage());
      }
    } finally {
      schedule("lease", this::renewLease, next);
    }
  }

  private void updateStatus() {
    try {
      if (status.update()) {
        LOG.debug("Status of node {} written", nodeName);
      }
      if (statusFailures > 0) {
        LOG.info("Status of node {} reported again after {} failed attempts", nodeName, statusFailures);
      }
      statusFailures = 0;
    } catch (RuntimeException e) {
      if (statusFailures++ == 0) {
        LOG.warn("Status of node {} could not be reported, trying again every {} s: {}", nodeName,
            STATUS_INTERVAL.toSeconds(), e.getMessage());
      }
    } finally {
      schedule("status", this::updateStatus, STATUS_INTERVAL);
    }
  }

  private synchronized void schedule(String loop, Runnable task, Duration delay) {
    if (!closed) {
      pending.put(loop, timer.schedule(task, delay));
    }
  }

  /** @return the Node as last read or written; empty until registered */
  Optional<Node> node() {
    Node read = status.latest();
    return Optional.ofNullable(read != null ? read : registered);
  }

  /** @return whether the Node was created or adopted */
  boolean registered() {
    return nodeUid != null;
  }

  /** @return why the node is not in order now (not registered, Lease not renewed for its duration); empty if it is */
  Optional<String> problem() {
    String registering = problem;
    if (registering != null) {
      return Optional.of(registering);
    }
    Instant last = renewed;
    if (last == null || clock.instant().isAfter(last.plusSeconds(NodeLease.DURATION_SECONDS))) {
      return Optional.of("Lease " + NodeLease.NAMESPACE + "/" + nodeName + " not renewed "
          + (last == null ? "yet" : "since " + last));
    }
    return Optional.empty();
  }

  /** Stops every loop; a write in flight finishes (the caller's timer ends its threads). */
  @Override
  public synchronized void close() {
    closed = true;
    pending.values().forEach(Timer.Cancellable::cancel);
    pending.clear();
  }

  /** How a {@link NodeAgent} is built. */
  static final class Builder {
    private final KubernetesClient client;
    private final NodeObjects.Identity identity;
    private final NodeSettings settings;
    private final Supplier<HostFacts> facts;
    private Clock clock = Clock.systemUTC();
    private Timer timer;
    private Supplier<Optional<String>> notReady = Optional::empty;
    private Supplier<Optional<String>> nodeUid = Optional::empty;

    private Builder(KubernetesClient client, NodeObjects.Identity identity, NodeSettings settings,
        Supplier<HostFacts> facts) {
      this.client = Objects.requireNonNull(client, "client");
      this.identity = Objects.requireNonNull(identity, "identity");
      this.settings = Objects.requireNonNull(settings, "settings");
      this.facts = Objects.requireNonNull(facts, "facts");
    }

    Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    Builder timer(Timer timer) {
      this.timer = Objects.requireNonNull(timer, "timer");
      return this;
    }

    /** Why the node cannot run pods now (Ready False with this message); empty when it can. */
    Builder notReady(Supplier<Optional<String>> notReady) {
      this.notReady = Objects.requireNonNull(notReady, "notReady");
      return this;
    }

    /** The Node's UID as watched elsewhere, for the Lease's owner reference before this agent registered. */
    Builder nodeUid(Supplier<Optional<String>> nodeUid) {
      this.nodeUid = Objects.requireNonNull(nodeUid, "nodeUid");
      return this;
    }

    NodeAgent build() {
      Objects.requireNonNull(timer, "timer");
      return new NodeAgent(this);
    }
  }
}
