package dev.nodelet.dra.internal;

import dev.nodelet.dra.DraStatus;
import dev.nodelet.dra.DriverStatus;
import java.util.Map;
import java.util.TreeMap;
import org.apache.felix.hc.api.FormattingResultLog;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * Readiness and the condition {@code nodelet.slices.published}: every DRA driver's resources are published (no
 * driver backing off after a failed sync). Reads the controller's status, so it never asks the API server.
 */
@Component(property = {HealthCheck.NAME + "=nodelet-dra-publishing", HealthCheck.TAGS + "=nodelet",
    HealthCheck.TAGS + "=nodelet-dra-publishing"})
public final class DraPublishingHealthCheck implements HealthCheck {

  private final DraStatus status;

  @Activate
  public DraPublishingHealthCheck(@Reference(name = "status") DraStatus status) {
    this.status = status;
  }

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
