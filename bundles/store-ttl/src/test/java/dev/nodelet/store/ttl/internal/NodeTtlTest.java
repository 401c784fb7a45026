package dev.nodelet.store.ttl.internal;

import dev.nodelet.objectcache.testing.ApiServerExtension;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.store.ttl.TtlStoreStrategy;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The node's time-to-live follows its annotation, and closing never leaves a watch on the API server. */
class NodeTtlTest {

  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines

  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension();

  @BeforeEach
  void start() {
    annotate("30");
  }

  private void annotate(String seconds) {
    api.client().nodes().resource(new NodeBuilder().withNewMetadata().withName("node-1")
        .addToAnnotations(TtlStoreStrategy.TTL_ANNOTATION, seconds).endMetadata().build()).createOr(e -> e.update());
  }

  @Test
  void followsTheAnnotationAcrossACutWatch() {
    try (NodeTtl ttl = NodeTtl.start(api.client(), "node-1", TtlStoreStrategy.TTL_ANNOTATION)) {
      await().atMost(WAIT).until(() -> ttl.ttl().equals(java.util.Optional.of(Duration.ofSeconds(30))));
      await().atMost(WAIT).until(() -> api.server().openWatches("nodes") == 1);
      annotate("45");
      await().atMost(WAIT).until(() -> ttl.ttl().equals(java.util.Optional.of(Duration.ofSeconds(45))));
      api.server().cutWatches();
      annotate("60");
      await().atMost(WAIT).until(() -> ttl.ttl().equals(java.util.Optional.of(Duration.ofSeconds(60))));
      annotate("not a number");
      await().atMost(WAIT).until(() -> ttl.ttl().isEmpty());
    }
    await().atMost(WAIT).until(() -> api.server().openWatches("nodes") == 0);
  }

  /**
   * A close may fall before, during or after the watch request and its response; none may leave a watch open on the
   * API server, nor a thread. FelixChurnIT covers the same in Felix.
   */
  @Test
  void closingAtAnyMomentLeavesNoWatch() throws InterruptedException {
    for (int i = 0; i < 200; i++) {
      NodeTtl ttl = NodeTtl.start(api.client(), "node-1", TtlStoreStrategy.TTL_ANNOTATION);
      Thread.sleep(i % 20); // before, during and after the list and the watch request
      ttl.close();
    }
    // a pool ends its last worker just after its termination is seen
    await().atMost(WAIT).until(() -> Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.isAlive()
        && t.getName().startsWith("nodelet-reflector-")));
    // a request cancelled in flight may reach a slow server after its cancellation started and show open for a
    // moment; a leaked watch stays open, so none may be open for half a second in a row
    await().atMost(WAIT).during(Duration.ofMillis(500)).until(() -> api.server().openWatches("nodes") == 0);
  }
}
