package dev.nodelet.dra.claims.internal;

import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimStatus;
import org.apache.felix.hc.api.FormattingResultLog;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The claims of this node's pods: a claim whose preparation fails, or a checkpoint that cannot be written, is a
 * warning. Readiness still passes (the kubelet does not hold a node back for one claim either), but
 * {@code /readyz?verbose} and {@code /system/health} say it. Reads the manager's state only.
 */
@Component(property = {HealthCheck.NAME + "=nodelet-dra-claims", HealthCheck.TAGS + "=nodelet",
    HealthCheck.TAGS + "=nodelet-dra-claims"})
public final class ClaimsHealthCheck implements HealthCheck {

  /** How many failing claims a result names; the rest are counted. */
  static final int NAMED = 5;

  private final ClaimStatus status;

  @Activate
  public ClaimsHealthCheck(@Reference(name = "status") ClaimStatus status) {
    this.status = status;
  }

  @Override
  public Result execute() {
    FormattingResultLog log = new FormattingResultLog();
    status.checkpointProblem().ifPresent(problem -> log.warn("the checkpoint cannot be written: {}", problem));
    int failing = 0;
    for (ClaimInfo claim : status.claims()) {
      if (claim.error() != null) {
        if (failing++ < NAMED) {
          log.warn("claim {}/{}: {}", claim.namespace(), claim.name(), claim.error());
        }
      }
    }
    if (failing > NAMED) {
      log.warn("{} more failing claims", failing - NAMED);
    }
    if (failing == 0 && status.checkpointProblem().isEmpty()) {
      log.info("{} claims, none failing", status.claims().size());
    }
    return new Result(log);
  }
}
