package dev.nodelet.store.watch.internal;

import dev.nodelet.kube.NodeIdentity;
import java.util.Optional;

/** The identity of a node named {@value #NAME}, for constructing the component. */
final class TestNode implements NodeIdentity {

  static final String NAME = "test-node";

  @Override
  public String nodeName() {
    return NAME;
  }

  @Override
  public Optional<String> nodeUid() {
    return Optional.empty();
  }
}
