package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.controller.DrivableScheduler;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import dev.nodelet.testing.apiserver.RecordedWrite;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The status writer against the embedded API server: newest status wins, order per pod, retries, a gone pod. */
class StatusWriterTest {

  private final EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
  private final KubernetesClient client = server.newClient();
  private final GatedApi api = new GatedApi(new KubePodApi(client));
  private final DrivableScheduler timers = new DrivableScheduler();
  private final List<String> gone = new CopyOnWriteArrayList<>();
  private final StatusWriter writer = new StatusWriter(api, timers, Runnable::run, gone::add, 2);

  @AfterEach
  void stop() {
    api.open.countDown();
    writer.close();
    client.close();
    server.close();
  }

  private Pod pod(String name) {
    return client.pods().inNamespace("default").resource(PodLifecycleTest.pod(name, "mvn:org.example/hello/1.0.0"))
        .create();
  }

  private static PodStatus status(String phase, String message) {
    return new PodStatusBuilder().withPhase(phase).withMessage(message).build();
  }

  private List<RecordedWrite> statusWrites(String name) {
    return server.writes().stream().filter(w -> w.resource().equals("pods") && name.equals(w.name())
        && w.verb().toString().equals("PATCH")).toList();
  }

  @Test
  void theNewestStatusWinsOverOnesNotSentYetAndWhatWaitsForItRunsAfterIt() throws Exception {
    Pod pod = pod("p");
    api.gated = "p";
    writer.write(pod, status("Pending", "first"));
    assertThat(api.entered.await(10, TimeUnit.SECONDS)).as("the first write is under way").isTrue();
    writer.write(pod, status("Pending", "second"));
    writer.write(pod, status("Running", "third"));
    CountDownLatch after = new CountDownLatch(1);
    writer.whenWritten(pod.getMetadata().getUid(), after::countDown);
    assertThat(after.getCount()).as("waits for the writes queued").isEqualTo(1);

    api.open.countDown();
    assertThat(writer.awaitQuiet(Duration.ofSeconds(10))).isTrue();
    assertThat(after.await(10, TimeUnit.SECONDS)).isTrue();
    PodStatus written = client.pods().inNamespace("default").withName("p").get().getStatus();
    assertThat(written.getPhase()).isEqualTo("Running");
    assertThat(written.getMessage()).isEqualTo("third");
    assertThat(api.written).as("the second, replaced before it was sent, is never written")
        .extracting(PodStatus::getMessage).containsExactly("first", "third");

    writer.write(pod, status("Running", "third"));
    assertThat(writer.awaitQuiet(Duration.ofSeconds(10))).isTrue();
    assertThat(statusWrites("p")).as("an unchanged status is not written again").hasSize(2);
  }

  @Test
  void aWriteThatFailsIsTriedAgainAfterItsBackoffWithTheNewestStatus() throws Exception {
    Pod pod = pod("p");
    server.stop();
    try {
      writer.write(pod, status("Pending", "while away"));
      assertThat(writer.awaitQuiet(Duration.ofSeconds(30))).isTrue();
      assertThat(writer.retrying(pod.getMetadata().getUid())).isTrue();
      assertThat(timers.pendingDelays()).containsExactly(Duration.ofSeconds(1));
      writer.write(pod, status("Running", "newest"));
      assertThat(writer.quiet()).as("waits for its back-off").isTrue();
    } finally {
      server.start();
    }
    timers.advance(Duration.ofSeconds(1));
    assertThat(writer.awaitQuiet(Duration.ofSeconds(30))).isTrue();
    assertThat(writer.retrying(pod.getMetadata().getUid())).isFalse();
    assertThat(client.pods().inNamespace("default").withName("p").get().getStatus().getMessage())
        .isEqualTo("newest");
  }

  @Test
  void aPodGoneFromTheApiServerIsReportedAndForgotten() throws Exception {
    Pod pod = pod("p");
    client.pods().inNamespace("default").withName("p").withGracePeriod(0).delete();
    writer.write(pod, status("Running", null));
    assertThat(writer.awaitQuiet(Duration.ofSeconds(10))).isTrue();
    assertThat(gone).containsExactly(pod.getMetadata().getUid());
    assertThat(writer.retrying(pod.getMetadata().getUid())).isFalse();
  }

  /** The real API, with the status writes of one pod held until {@link #open}. */
  static final class GatedApi implements PodApi {
    final PodApi real;
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch open = new CountDownLatch(1);
    final List<PodStatus> written = new CopyOnWriteArrayList<>();
    volatile String gated;

    GatedApi(PodApi real) {
      this.real = real;
    }

    @Override
    public Outcome writeStatus(Pod pod, PodStatus status) {
      if (pod.getMetadata().getName().equals(gated)) {
        written.add(status);
        entered.countDown();
        try {
          open.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return real.writeStatus(pod, status);
    }

    @Override
    public Outcome delete(Pod pod) {
      return real.delete(pod);
    }

    @Override
    public Node node(String name) {
      return real.node(name);
    }

    @Override
    public void close() {
      real.close();
    }
  }
}
