package dev.nodelet.dra.claims.internal;

import dev.nodelet.controller.RateLimiter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The steps that failed, per claim, with the controller runtime's per-item exponential back-off ({@code initial}
 * doubling per failure up to {@code max}, forgotten when the step succeeds); and per pod the earliest time it is
 * tried again. Touched by the claim manager's thread only.
 */
final class Failures {

  private static final Logger LOG = LoggerFactory.getLogger(Failures.class);

  /** A step that failed, with its retry; {@code podUid} null for an unprepare. */
  record Failure(String namespace, String name, String podUid, String message, int attempts, Instant nextRetry) {
    String key() {
      return namespace + "/" + name;
    }
  }

  private final Clock clock;
  private final RateLimiter<String> delays;
  private final Map<String, Failure> byClaim = new TreeMap<>();
  private final Map<String, Instant> podRetry = new HashMap<>();

  Failures(Clock clock, Duration initial, Duration max) {
    this.clock = clock;
    // a cap below the first delay is every delay, as it always was
    this.delays = RateLimiter.itemExponential(initial.compareTo(max) > 0 ? max : initial, max);
  }

  void fail(String namespace, String name, String podUid, String message) {
    String key = namespace + "/" + name;
    Failure before = byClaim.get(key);
    long delay = delays.when(key).toMillis();
    int attempts = delays.numRequeues(key);
    Instant next = clock.instant().plusMillis(delay);
    byClaim.put(key, new Failure(namespace, name, podUid, message, attempts, next));
    if (podUid != null) {
      podRetry.merge(podUid, next, (a, b) -> a.isAfter(b) ? a : b);
    }
    if (before == null || !before.message().equals(message)) {
      LOG.error("ResourceClaim {}: {}; trying again in {} ms", key, message, delay);
    } else {
      LOG.debug("ResourceClaim {}: {} (attempt {})", key, message, attempts);
    }
  }

  Failure get(String claimKey) {
    return byClaim.get(claimKey);
  }

  void clear(String claimKey) {
    byClaim.remove(claimKey);
    delays.forget(claimKey);
  }

  void clearIf(Predicate<Failure> which) {
    byClaim.values().removeIf(f -> {
      boolean cleared = which.test(f);
      if (cleared) {
        delays.forget(f.key());
      }
      return cleared;
    });
  }

  Collection<Failure> all() {
    return byClaim.values();
  }

  /** True while the pod waits for its retry. */
  boolean podWaits(String podUid, Instant now) {
    Instant at = podRetry.get(podUid);
    return at != null && now.isBefore(at);
  }

  void podDone(String podUid) {
    podRetry.remove(podUid);
  }

  void keepPods(Predicate<String> which) {
    podRetry.keySet().removeIf(which.negate());
  }

  Optional<Instant> nextRetry() {
    return byClaim.values().stream().map(Failure::nextRetry).min(Comparator.naturalOrder());
  }
}
