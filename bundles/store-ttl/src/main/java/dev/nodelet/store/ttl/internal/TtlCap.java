package dev.nodelet.store.ttl.internal;

import dev.nodelet.store.ttl.TtlStoreStrategy;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Caps time-to-lives at {@link TtlStoreStrategy#MAX_TTL}: about 3.2e16 seconds added to an instant overflows, which
 * would fail every get (Go's kubelet wraps around silently instead).
 */
public final class TtlCap {

  private static final Logger LOG = LoggerFactory.getLogger(TtlCap.class);
  private static final Duration MAX = TtlStoreStrategy.MAX_TTL;

  private final String nodeName;
  // the annotation is read on every get: warn once per value, not per get
  private final AtomicReference<Duration> lastCapped = new AtomicReference<>();

  /** @param nodeName the node whose annotation this caps, for the warning */
  public TtlCap(String nodeName) {
    this.nodeName = nodeName;
  }

  /** The annotation's time-to-live, capped; warns the first time a value is capped. */
  public Duration annotated(Duration ttl) {
    if (ttl.compareTo(MAX) <= 0) {
      lastCapped.set(null);
      return ttl;
    }
    if (!ttl.equals(lastCapped.getAndSet(ttl))) {
      LOG.warn("Node {}: annotation {}={} seconds is longer than the maximum of {} seconds; using {} seconds",
          nodeName, TtlStoreStrategy.TTL_ANNOTATION, ttl.getSeconds(), MAX.getSeconds(), MAX.getSeconds());
    }
    return MAX;
  }

  /** A default time-to-live, capped with a warning. */
  public static Duration capDefault(Duration ttl) {
    if (ttl.compareTo(MAX) <= 0) {
      return ttl;
    }
    LOG.warn("Default TTL of {} seconds is longer than the maximum of {} seconds; using {} seconds",
        ttl.getSeconds(), MAX.getSeconds(), MAX.getSeconds());
    return MAX;
  }
}
