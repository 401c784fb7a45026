package dev.nodelet.node;

import io.fabric8.kubernetes.api.model.Node;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * This Nodelet as a Kubernetes node: registered as a service only while node mode is on, so that a component that
 * runs pods can require it and stay inactive otherwise. Never blocks: it answers from what the node's own loops
 * read and wrote.
 */
@ProviderType
public interface RegisteredNode {

  /** The service property that carries the node name. */
  String NODE_NAME_PROPERTY = "nodelet.node.name";

  /**
   * @return the name of this node's {@code Node}
   */
  String nodeName();

  /**
   * The {@code Node} as the node last read or wrote it (refreshed every 10 s): its labels, taints, capacity and
   * allocatable, as a kubelet's admission reads them.
   *
   * @return the Node; empty until it has been registered
   */
  Optional<Node> node();
}
