package dev.nodelet.node.internal;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * What the node tests run on: the embedded API server, its client and driven time. Closing it closes what the test
 * handed to {@link #closing} first (newest first), then the client and the server.
 */
final class NodeRig implements AutoCloseable {

  static final String NODE = "node-a";

  final EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
  final KubernetesClient client = server.newClient();
  final DrivenTime time = new DrivenTime();
  private final List<AutoCloseable> started = new ArrayList<>();

  /** @return a builder of the agent of {@link #NODE} on the rig's client and driven time */
  NodeAgent.Builder agent(NodeSettings settings, Supplier<HostFacts> facts) {
    return NodeAgent.builder(client, new NodeObjects.Identity(NODE, NODE), settings, facts).clock(time)
        .timer(time.timer());
  }

  /** Closes {@code closeable} with the rig, before the API server. */
  <T extends AutoCloseable> T closing(T closeable) {
    started.add(closeable);
    return closeable;
  }

  @Override
  public void close() throws Exception {
    try {
      for (int i = started.size() - 1; i >= 0; i--) {
        started.get(i).close();
      }
    } finally {
      client.close();
      server.close();
    }
  }
}
