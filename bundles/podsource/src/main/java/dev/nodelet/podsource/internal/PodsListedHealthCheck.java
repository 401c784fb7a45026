package dev.nodelet.podsource.internal;

import dev.nodelet.podsource.PodSource;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.felix.hc.api.FormattingResultLog;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;

/**
 * Readiness and the condition {@code nodelet.caches.synced}: the pods of this node have been listed and handed to
 * every pod listener (the ConfigMap and Secret managers, the DRA claims). Until then the cache-sync check cannot see
 * the objects of those pods, and would pass with none. Registered by {@link PodSourceComponent}; reads the pod source, so it never asks the API server.
 *
 * @param nodeName the node whose pods are watched
 * @param source the pod source running now; null while the component waits for a valid configuration
 */
record PodsListedHealthCheck(String nodeName, Supplier<PodSource> source) implements HealthCheck {

  /** The check's service properties. */
  static final Map<String, Object> PROPERTIES = Map.of(HealthCheck.NAME, "nodelet-pods-listed",
      HealthCheck.TAGS, new String[] {"nodelet", "nodelet-cache-sync", "nodelet-pods-listed"});

  @Override
  public Result execute() {
    FormattingResultLog log = new FormattingResultLog();
    PodSource running = source.get();
    if (running == null) {
      log.temporarilyUnavailable("the pod source of node {} is not running", nodeName);
    } else if (running.isSynced()) {
      log.info("node {}: {} pods listed and handed to the pod listeners", nodeName, running.pods().size());
    } else {
      log.temporarilyUnavailable("the pods of node {} are not listed and handed to the pod listeners yet (the "
          + "pod watch retries while the API server does not answer)", nodeName);
    }
    return new Result(log);
  }
}
