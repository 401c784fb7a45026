package dev.nodelet.kube.internal;

import dev.nodelet.kube.NodeIdentity;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * Readiness: the Node object of this node's name exists and its UID is known (what owner references of published
 * ResourceSlices need). Never asks the API server: the identity service keeps the Node watched.
 */
@Component(property = {HealthCheck.NAME + "=nodelet-node", HealthCheck.TAGS + "=nodelet",
    HealthCheck.TAGS + "=nodelet-kube"})
public final class NodeIdentityHealthCheck implements HealthCheck {

  @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
      policyOption = ReferencePolicyOption.GREEDY)
  private volatile NodeIdentity identity;

  @Override
  public Result execute() {
    NodeIdentity current = identity;
    if (current == null) {
      return new Result(Result.Status.CRITICAL, "no node identity: the configuration " + KubeComponent.PID
          + " is invalid (see the log) or its bundle is stopping");
    }
    return current.nodeUid()
        .map(uid -> new Result(Result.Status.OK, "node " + current.nodeName() + " has UID " + uid))
        .orElseGet(() -> new Result(Result.Status.TEMPORARILY_UNAVAILABLE, "node " + current.nodeName()
            + " is not known to the API server yet (no Node object of that name, or not read yet)"));
  }
}
