package dev.nodelet.dra.internal;

import static org.awaitility.Awaitility.await;

import dev.nodelet.dra.Pool;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.RecordedWrite;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import java.util.List;
import java.util.function.Supplier;

/**
 * A driver whose change the controller's one worker syncs after everything queued before it (first in first out):
 * once its write is on the server, the controller has handled all that came before.
 */
final class WorkerBarrier {

  static final String DRIVER = "barrier.example.com";

  private final Supplier<EmbeddedApiServer> server;
  private final String node;
  private TestDriver driver;
  private int round; // every change publishes a new device, so that every change is a write

  /** @param server the server of the running test (a test may start another) */
  WorkerBarrier(Supplier<EmbeddedApiServer> server, String node) {
    this.server = server;
    this.node = node;
  }

  /** Adds a barrier driver to the controller and returns once it is published. */
  void addTo(NodeResourcesController controller) {
    driver = new TestDriver(DRIVER);
    controller.addDriver(driver);
    pass();
  }

  /**
   * Returns once the worker has handled everything queued before. Twice, so that an item re-queued while it was
   * being processed is covered too.
   */
  void pass() {
    for (int i = 0; i < 2; i++) {
      long before = writesOf(DRIVER).size();
      driver.publish(List.of(new Pool("barrier", List.of(new DeviceBuilder().withName("b-" + ++round)
          .addToAttributes("model", new DeviceAttribute(null, null, "a100", null)).build()))));
      await().until(() -> writesOf(DRIVER).size() > before);
    }
  }

  /** The writes the server recorded of the slices of a driver (named {@code <node>-<driver>-...}). */
  List<RecordedWrite> writesOf(String driverName) {
    return server.get().writes().stream()
        .filter(w -> w.name() != null && w.name().startsWith(node + "-" + driverName + "-")).toList();
  }
}
