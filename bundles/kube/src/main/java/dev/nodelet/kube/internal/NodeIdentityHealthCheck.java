package dev.nodelet.kube.internal;

import dev.nodelet.kube.NodeIdentity;
import java.util.Map;
import org.apache.felix.hc.api.HealthCheck;
import org.apache.felix.hc.api.Result;

/**
 * Readiness: the Node object of this node's name exists and its UID is known (what owner references of published
 * ResourceSlices need). Registered with the node identity by {@link KubeComponent}. Never asks the API server: the
 * identity service keeps the Node watched.
 */
final class NodeIdentityHealthCheck implements HealthCheck {

  /** The check's service properties. */
  static final Map<String, Object> PROPERTIES = Map.of(HealthCheck.NAME, "nodelet-node",
      HealthCheck.TAGS, new String[] {"nodelet", "nodelet-kube"});

  private final NodeIdentity identity;

  NodeIdentityHealthCheck(NodeIdentity identity) {
    this.identity = identity;
  }

  @Override
  public Result execute() {
    return identity.nodeUid()
        .map(uid -> new Result(Result.Status.OK, "node " + identity.nodeName() + " has UID " + uid))
        .orElseGet(() -> new Result(Result.Status.TEMPORARILY_UNAVAILABLE, "node " + identity.nodeName()
            + " is not known to the API server yet (no Node object of that name, or not read yet)"));
  }
}
