package dev.nodelet.dra.internal;

import dev.nodelet.dra.DraStatus;
import dev.nodelet.dra.DriverStatus;
import java.util.Map;
import java.util.TreeMap;
import org.apache.felix.hc.api.FormattingResultLog;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;

/**
 * Readiness and the condition {@code nodelet.slices.published}: every DRA driver's resources are published (no
 * driver backing off after a failed sync). Registered with the controller's status by {@link DraComponent}; reads
 * that status, so it never asks the API server.
 *
 * @param status the controller's status
 */
record DraPublishingHealthCheck(DraStatus status) implements HealthCheck {

  /** The check's service properties. */
  static final Map<String, Object> PROPERTIES = Map.of(HealthCheck.NAME, "nodelet-dra-publishing",
      HealthCheck.TAGS, new String[] {"nodelet", "nodelet-dra-publishing"});

  @Override
  public Result execute() {
    FormattingResultLog log = new FormattingResultLog();
    int failing = 0;
    for (DriverStatus driver : status.drivers()) {
      if (driver.state() == DriverStatus.State.BACKING_OFF) {
        failing++;
        log.temporarilyUnavailable("driver {}: publishing fails, retrying in {}: {}", driver.driverName(),
            driver.backoff(), driver.lastError().orElse("no reason given"));
      }
    }
    for (Map.Entry<String, String> failure : new TreeMap<>(status.syncFailures()).entrySet()) {
      failing++;
      log.temporarilyUnavailable("driver {}: its ResourceSlices are not published: {}", failure.getKey(),
          failure.getValue());
    }
    if (failing == 0) {
      log.info("node {}: {} drivers, {} ResourceSlices published", status.nodeName(), status.drivers().size(),
          status.slices().size());
    }
    return new Result(log);
  }
}
