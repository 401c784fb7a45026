package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleActivator;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/** A bundle whose stop hangs does not hold its pod past the grace period, as the kubelet kills a container. */
class PodGracePeriodTest {

  /** The service a {@link HangingActivator} waits on in its stop: the test counts it down to let it return. */
  private static final String LATCH = "java.util.concurrent.CountDownLatch";

  @TempDir
  Path dir;
  PodsHarness h;
  final CountDownLatch release = new CountDownLatch(1);

  @BeforeEach
  void start() throws Exception {
    h = new PodsHarness(dir);
    Dictionary<String, Object> properties = new Hashtable<>(java.util.Map.of("test", "hang"));
    h.felix.context().registerService(LATCH, release, properties);
  }

  @AfterEach
  void stop() throws Exception {
    release.countDown();
    h.close();
  }

  @Test
  void aBundleWhoseStopHangsIsConsideredKilledAfterTheGraceAndThePodIsReleased() throws Exception {
    TestBundles.write(h.repository, "org.example", "hang", "1.0.0", HangingActivator.class);
    h.run(PodLifecycleTest.pod("p", "mvn:org.example/hang/1.0.0"));
    Bundle bundle = h.felix.context().getBundle("nodelet-pod:default/p/c0");
    assertThat(bundle.getState()).isEqualTo(Bundle.ACTIVE);

    List<Pod> seen = new CopyOnWriteArrayList<>();
    try (var ignored = h.client.pods().inNamespace("default").withName("p").watch(new Watcher<Pod>() {
      @Override
      public void eventReceived(Action action, Pod pod) {
        seen.add(pod);
      }

      @Override
      public void onClose(WatcherException cause) {
      }
    })) {
      Pod deleting = h.client.pods().inNamespace("default").withName("p").get();
      deleting.getMetadata().setDeletionTimestamp("2026-11-28T10:00:01Z");
      deleting.getMetadata().setDeletionGracePeriodSeconds(1L); // the kubelet's minimum of 2 s applies
      long started = System.nanoTime();
      h.runtime.podUpdated(deleting);
      assertThat(h.runtime.awaitIdle(Duration.ofSeconds(15))).as("the pods' work is free again").isTrue();
      long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      assertThat(took).as("waited the grace, not longer").isBetween(1_900L, 10_000L);

      // released as the kubelet does after a force-kill: the termination recorded, then the pod deleted
      assertThat(h.client.pods().inNamespace("default").withName("p").get()).isNull();
      Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> seen.stream().anyMatch(p -> terminated(p) != null));
      ContainerStateTerminated killed = seen.stream().map(PodGracePeriodTest::terminated)
          .filter(t -> t != null).reduce((a, b) -> b).orElseThrow();
      assertThat(killed.getExitCode()).isEqualTo(137);
      assertThat(killed.getReason()).isEqualTo("Error");
      assertThat(killed.getMessage()).isEqualTo("the bundle did not stop within the grace period of 2s");
    }
    Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
        h.client.v1().events().inNamespace("default").list().getItems()).extracting(Event::getReason)
        .contains("Killing", "StopTimeout"));
    Event timeout = h.client.v1().events().inNamespace("default").list().getItems().stream()
        .filter(e -> e.getReason().equals("StopTimeout")).findFirst().orElseThrow();
    assertThat(timeout.getType()).isEqualTo("Warning");
    assertThat(timeout.getMessage()).isEqualTo("Container c0 did not stop within the grace period of 2s: "
        + "considered killed");
    assertThat(bundle.getState()).as("its stop still runs").isEqualTo(Bundle.STOPPING);

    release.countDown(); // the stop returns at last: the bundle is uninstalled then
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> bundle.getState() == Bundle.UNINSTALLED);
    assertThat(h.felix.context().getBundle("nodelet-pod:default/p/c0")).isNull();
  }

  @Test
  void theGraceIsTheKubelets() {
    Pod pod = PodLifecycleTest.pod("p", "mvn:org.example/hang/1.0.0");
    assertThat(BoundedStop.grace(pod)).isEqualTo(Duration.ofSeconds(30));
    pod.getSpec().setTerminationGracePeriodSeconds(5L);
    assertThat(BoundedStop.grace(pod)).isEqualTo(Duration.ofSeconds(5));
    pod.getMetadata().setDeletionTimestamp("2026-11-28T10:00:01Z");
    pod.getMetadata().setDeletionGracePeriodSeconds(12L);
    assertThat(BoundedStop.grace(pod)).isEqualTo(Duration.ofSeconds(12));
    pod.getMetadata().setDeletionGracePeriodSeconds(0L); // a forced deletion still gives the minimum
    assertThat(BoundedStop.grace(pod)).isEqualTo(Duration.ofSeconds(2));
    assertThat(BoundedStop.grace(null)).isEqualTo(Duration.ofSeconds(30));
  }

  private static ContainerStateTerminated terminated(Pod pod) {
    if (pod.getStatus() == null || pod.getStatus().getContainerStatuses() == null) {
      return null;
    }
    return pod.getStatus().getContainerStatuses().stream()
        .map(c -> c.getState() == null ? null : c.getState().getTerminated()).filter(t -> t != null).findFirst()
        .orElse(null);
  }

  /** Its stop waits for the test's latch service (at most a minute, so that no test leaves it hanging for good). */
  public static final class HangingActivator implements BundleActivator {
    @Override
    public void start(BundleContext context) {
    }

    @Override
    public void stop(BundleContext context) throws Exception {
      ServiceReference<?> reference = context.getServiceReference(LATCH_NAME);
      if (reference != null) {
        ((CountDownLatch) context.getService(reference)).await(60, TimeUnit.SECONDS);
      }
    }

    private static final String LATCH_NAME = "java.util.concurrent.CountDownLatch";
  }
}
