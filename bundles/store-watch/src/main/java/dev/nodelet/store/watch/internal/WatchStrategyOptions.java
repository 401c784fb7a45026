package dev.nodelet.store.watch.internal;

import dev.nodelet.kube.watch.Reflectors;
import dev.nodelet.persistence.Persistence;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * The options of a watch strategy, each checked as it is set: what {@code WatchStoreStrategy.Builder} and the
 * strategy component fill in, and what {@link WatchStrategyRuntime} is built from.
 */
public final class WatchStrategyOptions {

  /** The longest time-to-live of polled objects: a year, as for the {@code ttl} strategy. */
  static final Duration MAX_TTL = Duration.ofDays(365);

  final KubernetesClient client;
  Clock clock = Clock.systemUTC();
  private Duration resyncInterval = Duration.ofMinutes(1);
  Duration syncWait = Duration.ofSeconds(1);
  Duration sweepInterval = Duration.ofMinutes(1);
  WatchMetrics metrics = new WatchMetrics();
  Persistence persistence;
  Duration restoredGrace = Duration.ofMinutes(1);
  int maxWatches;
  Duration polledTtl = WatchSettings.DEFAULT_POLLED_TTL;
  Optional<Function<String, Optional<String>>> nodeAnnotations = Optional.empty();
  Reflectors reflectors;

  /** @param client the client to watch with (and to check an immutable object again) */
  public WatchStrategyOptions(KubernetesClient client) {
    this.client = Objects.requireNonNull(client, "client");
  }

  /** @param reflectors where the objects' reflectors come from, instead of an engine the strategy builds */
  public WatchStrategyOptions reflectors(Reflectors reflectors) {
    this.reflectors = Objects.requireNonNull(reflectors, "reflectors");
    return this;
  }

  /** @param metrics where the stores of the strategy count what they do */
  public WatchStrategyOptions metrics(WatchMetrics metrics) {
    this.metrics = Objects.requireNonNull(metrics, "metrics");
    return this;
  }

  /** @param clock the clock of access times and the idle sweep */
  public WatchStrategyOptions clock(Clock clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
    return this;
  }

  /** @param resyncInterval the interval at which consumers re-read their objects; positive */
  public WatchStrategyOptions resyncInterval(Duration resyncInterval) {
    this.resyncInterval = positive("resyncInterval", resyncInterval);
    return this;
  }

  /** @param syncWait how long a get waits for an object's first list; positive */
  public WatchStrategyOptions syncWait(Duration syncWait) {
    this.syncWait = positive("syncWait", syncWait);
    return this;
  }

  /** @param sweepInterval how often idle watches are looked for; positive */
  public WatchStrategyOptions sweepInterval(Duration sweepInterval) {
    this.sweepInterval = positive("sweepInterval", sweepInterval);
    return this;
  }

  /** Only the owner's ticks sweep and read the clock for access times. */
  public WatchStrategyOptions manualTicks() {
    this.sweepInterval = Duration.ZERO;
    return this;
  }

  /** @param persistence an open persistence directory, closed by the caller after the strategy */
  public WatchStrategyOptions persistence(Persistence persistence) {
    this.persistence = Objects.requireNonNull(persistence, "persistence");
    return this;
  }

  /** @param grace how long a pod whose references were read back from disk may take to register again; positive */
  public WatchStrategyOptions restoredReferenceGrace(Duration grace) {
    this.restoredGrace = positive("restoredReferenceGrace", grace);
    return this;
  }

  /** @param maxWatches 1 to {@link WatchBudget#MAX}, or 0 for no budget */
  public WatchStrategyOptions maxWatches(int maxWatches) {
    if (maxWatches < 0 || maxWatches > WatchBudget.MAX) {
      throw new IllegalArgumentException("maxWatches must be between 0 (no budget) and " + WatchBudget.MAX
          + ", was " + maxWatches);
    }
    this.maxWatches = maxWatches;
    return this;
  }

  /** @param ttl how long a polled copy is served before a get fetches it again; zero to a year */
  public WatchStrategyOptions polledTtl(Duration ttl) {
    Objects.requireNonNull(ttl, "polledTtl");
    if (ttl.isNegative() || ttl.compareTo(MAX_TTL) > 0) {
      throw new IllegalArgumentException("polledTtl must be between 0 and " + MAX_TTL + ", was " + ttl);
    }
    this.polledTtl = ttl;
    return this;
  }

  /** @param nodeAnnotations the node's annotation of a key, as last seen; must not block */
  public WatchStrategyOptions nodeAnnotations(Function<String, Optional<String>> nodeAnnotations) {
    this.nodeAnnotations = Optional.of(Objects.requireNonNull(nodeAnnotations, "nodeAnnotations"));
    return this;
  }

  /** @return the maximum idle time: five resync intervals, at least one minute */
  public Duration maxIdleTime() {
    Duration fiveResyncs = resyncInterval.multipliedBy(5);
    return fiveResyncs.compareTo(Duration.ofMinutes(1)) < 0 ? Duration.ofMinutes(1) : fiveResyncs;
  }

  private static Duration positive(String option, Duration value) {
    Objects.requireNonNull(value, option);
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(option + " must be positive, was " + value);
    }
    return value;
  }
}
