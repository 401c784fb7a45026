package dev.nodelet.kube.testing;

import dev.nodelet.kube.NodeIdentity;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A node identity for tests that need no watch of the Node: a fixed name and UID, and annotations read from the map
 * given (which the test may change).
 *
 * @param nodeName the node name
 * @param nodeUid the UID; empty as for a Node not seen yet
 * @param annotations the annotations, read on every call
 */
public record FixedNodeIdentity(String nodeName, Optional<String> nodeUid, Map<String, String> annotations)
    implements NodeIdentity {

  public FixedNodeIdentity {
    Objects.requireNonNull(nodeName, "nodeName");
    Objects.requireNonNull(nodeUid, "nodeUid");
    Objects.requireNonNull(annotations, "annotations");
  }

  /** @return a node of that name, with no UID and no annotations */
  public static FixedNodeIdentity named(String nodeName) {
    return new FixedNodeIdentity(nodeName, Optional.empty(), Map.of());
  }

  /** @return this node with a UID, as once its Node object has been seen */
  public FixedNodeIdentity withUid(String uid) {
    return new FixedNodeIdentity(nodeName, Optional.of(uid), annotations);
  }

  /** @return this node with annotations read from {@code annotations} */
  public FixedNodeIdentity withAnnotations(Map<String, String> annotations) {
    return new FixedNodeIdentity(nodeName, nodeUid, annotations);
  }

  @Override
  public Optional<String> nodeAnnotation(String key) {
    return Optional.ofNullable(annotations.get(key));
  }
}
