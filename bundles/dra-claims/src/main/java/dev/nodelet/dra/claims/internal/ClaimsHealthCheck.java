package dev.nodelet.dra.claims.internal;

import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimStatus;
import java.util.List;
import java.util.Optional;
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
    Optional<String> checkpoint = status.checkpointProblem();
    List<ClaimInfo> claims = status.claims();
    List<ClaimInfo> failing = claims.stream().filter(claim -> claim.error() != null).toList();
    FormattingResultLog log = new FormattingResultLog();
    checkpoint.ifPresent(problem -> log.warn("the checkpoint cannot be written: {}", problem));
    failing.stream().limit(NAMED)
        .forEach(claim -> log.warn("claim {}/{}: {}", claim.namespace(), claim.name(), claim.error()));
    if (failing.size() > NAMED) {
      log.warn("{} more failing claims", failing.size() - NAMED);
    }
    if (failing.isEmpty() && checkpoint.isEmpty()) {
      log.info("{} claims, none failing", claims.size());
    }
    return new Result(log);
  }
}
