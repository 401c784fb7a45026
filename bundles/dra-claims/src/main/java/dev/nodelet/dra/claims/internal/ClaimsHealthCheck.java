package dev.nodelet.dra.claims.internal;

import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimStatus;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.felix.hc.api.FormattingResultLog;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;

/**
 * The claims of this node's pods: a claim whose preparation fails, or a checkpoint that cannot be written, is a
 * warning. Readiness still passes (the kubelet does not hold a node back for one claim either), but
 * {@code /readyz?verbose} and {@code /system/health} say it. Registered with the manager's status by
 * {@link ClaimsComponent}; reads that state only.
 *
 * @param status the claim manager's state
 */
record ClaimsHealthCheck(ClaimStatus status) implements HealthCheck {

  /** The check's service properties. */
  static final Map<String, Object> PROPERTIES = Map.of(HealthCheck.NAME, "nodelet-dra-claims",
      HealthCheck.TAGS, new String[] {"nodelet", "nodelet-dra-claims"});

  /** How many failing claims a result names; the rest are counted. */
  static final int NAMED = 5;

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
