package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;

/** A pod's containers as bundles in a real Felix: pull, start, crash loop, deletion, against the API server. */
class PodLifecycleTest {

  @TempDir
  Path dir;
  PodsHarness h;

  @BeforeEach
  void start() throws Exception {
    h = new PodsHarness(dir);
  }

  @AfterEach
  void stop() throws Exception {
    h.close();
  }

  static Pod pod(String name, String... images) {
    PodBuilder pod = new PodBuilder().withNewMetadata().withName(name).withNamespace("default").endMetadata();
    var spec = pod.withNewSpec();
    for (int i = 0; i < images.length; i++) {
      spec.addNewContainer().withName("c" + i).withImage(images[i]).endContainer();
    }
    return spec.endSpec().build();
  }

  private static String condition(io.fabric8.kubernetes.api.model.PodStatus status, String type) {
    return status.getConditions().stream().filter(c -> c.getType().equals(type)).map(PodCondition::getStatus)
        .findFirst().orElse(null);
  }

  @Test
  void aPodRunsAsABundleUnderItsLocationWithTheKubeletsStatus() throws Exception {
    Path jar = TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    h.run(pod("p", "mvn:org.example/hello/1.0.0"));

    Bundle bundle = h.felix.context().getBundle("nodelet-pod:default/p/c0");
    assertThat(bundle).isNotNull();
    assertThat(bundle.getState()).isEqualTo(Bundle.ACTIVE);
    var status = h.status("p");
    assertThat(status.getPhase()).isEqualTo("Running");
    assertThat(condition(status, "Ready")).isEqualTo("True");
    assertThat(condition(status, "ContainersReady")).isEqualTo("True");
    assertThat(condition(status, "Initialized")).isEqualTo("True");
    assertThat(condition(status, "PodReadyToStartContainers")).isEqualTo("True");
    ContainerStatus c = h.container("p", "c0");
    assertThat(c.getContainerID()).isEqualTo("osgi://" + bundle.getBundleId());
    assertThat(c.getImageID()).isEqualTo("sha256:" + TestBundles.sha256(jar));
    assertThat(c.getState().getRunning().getStartedAt()).isEqualTo("2026-11-28T10:00:00Z");
    assertThat(c.getReady()).isTrue();
    assertThat(c.getRestartCount()).isZero();
  }

  @Test
  void anUnchangedPodWritesNothing() throws Exception {
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    h.run(pod("p", "mvn:org.example/hello/1.0.0"));
    h.feed("p");
    h.server.clearWrites();
    h.clock.advance(Duration.ofMinutes(1));
    h.feed("p");
    h.feed("p");
    assertThat(h.podWrites()).isEmpty();
  }

  @Test
  void aMissingImageIsErrImagePullThenImagePullBackOffAndIsRetriedAfterTheBackOff() throws Exception {
    h.run(pod("p", "mvn:org.example/missing/1.0.0"));
    ContainerStatus c = h.container("p", "c0");
    assertThat(c.getState().getWaiting().getReason()).isEqualTo("ErrImagePull");
    assertThat(c.getState().getWaiting().getMessage()).contains("mvn:org.example/missing/1.0.0")
        .contains("not found");
    assertThat(h.status("p").getPhase()).isEqualTo("Pending");

    h.feed("p");
    c = h.container("p", "c0");
    assertThat(c.getState().getWaiting().getReason()).isEqualTo("ImagePullBackOff");
    assertThat(c.getState().getWaiting().getMessage()).startsWith("Back-off pulling image");

    TestBundles.write(h.repository, "org.example", "missing", "1.0.0", null);
    h.clock.advance(Duration.ofSeconds(9));
    h.feed("p");
    assertThat(h.container("p", "c0").getState().getWaiting().getReason()).isEqualTo("ImagePullBackOff");
    h.clock.advance(Duration.ofSeconds(1));
    h.feed("p");
    assertThat(h.container("p", "c0").getState().getRunning()).isNotNull();
    assertThat(h.status("p").getPhase()).isEqualTo("Running");
  }

  @Test
  void aDigestThatDoesNotMatchInstallsNothing() throws Exception {
    Path jar = TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    String wrong = "0".repeat(64);
    h.run(pod("p", "mvn:org.example/hello/1.0.0@sha256:" + wrong));
    ContainerStatus c = h.container("p", "c0");
    assertThat(c.getState().getWaiting().getReason()).isEqualTo("ErrImagePull");
    assertThat(c.getState().getWaiting().getMessage()).contains("does not match its digest");
    assertThat(h.felix.context().getBundle("nodelet-pod:default/p/c0")).isNull();

    h.run(pod("q", "mvn:org.example/hello/1.0.0@sha256:" + TestBundles.sha256(jar)));
    assertThat(h.container("q", "c0").getState().getRunning()).isNotNull();
  }

  @Test
  void aJarThatIsNotABundleIsAnImageError() throws Exception {
    TestBundles.writePlainJar(h.repository, "org.example", "plain", "1.0.0");
    h.run(pod("p", "mvn:org.example/plain/1.0.0"));
    assertThat(h.container("p", "c0").getState().getWaiting().getMessage()).contains("is not an OSGi bundle");
  }

  @Test
  void twoContainersNamingTheSameArtifactGetAClearStatus() throws Exception {
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    h.run(pod("p", "mvn:org.example/hello/1.0.0", "mvn:org.example/hello/1.0.0"));
    assertThat(h.container("p", "c0").getState().getRunning()).isNotNull();
    var waiting = h.container("p", "c1").getState().getWaiting();
    assertThat(waiting.getReason()).isEqualTo("CreateContainerError");
    assertThat(waiting.getMessage()).contains("names the same image as container c0");
    assertThat(h.felix.context().getBundle("nodelet-pod:default/p/c1")).isNull();
  }

  @Test
  void aBundleThatFailsToStartCrashLoopsWithTheKubeletsBackOff() throws Exception {
    TestBundles.write(h.repository, "org.example", "bad", "1.0.0", TestBundles.ThrowingActivator.class);
    h.run(pod("p", "mvn:org.example/bad/1.0.0"));
    ContainerStatus c = h.container("p", "c0");
    assertThat(c.getState().getWaiting().getReason()).isEqualTo("CrashLoopBackOff");
    assertThat(c.getState().getWaiting().getMessage()).startsWith("back-off 10s restarting failed container=c0");
    assertThat(c.getLastState().getTerminated().getReason()).isEqualTo("Error");
    assertThat(c.getLastState().getTerminated().getExitCode()).isEqualTo(1);
    assertThat(c.getLastState().getTerminated().getMessage()).contains("activator refuses to start");
    assertThat(c.getRestartCount()).isZero();
    assertThat(h.status("p").getPhase()).isEqualTo("Running"); // restartPolicy Always: it will run again

    h.clock.advance(Duration.ofSeconds(10));
    h.feed("p");
    c = h.container("p", "c0");
    assertThat(c.getRestartCount()).isEqualTo(1);
    assertThat(c.getState().getWaiting().getMessage()).startsWith("back-off 20s");
    h.clock.advance(Duration.ofSeconds(19));
    h.feed("p");
    assertThat(h.container("p", "c0").getRestartCount()).isEqualTo(1);
    h.clock.advance(Duration.ofSeconds(1));
    h.feed("p");
    assertThat(h.container("p", "c0").getState().getWaiting().getMessage()).startsWith("back-off 40s");
    assertThat(h.container("p", "c0").getRestartCount()).isEqualTo(2);
  }

  @Test
  void aBundleThatStopsIsTerminatedAndRestartedPerPolicy() throws Exception {
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    h.run(pod("p", "mvn:org.example/hello/1.0.0"));
    Bundle bundle = h.felix.context().getBundle("nodelet-pod:default/p/c0");
    h.clock.advance(Duration.ofMinutes(1));
    bundle.stop(); // as a bundle that stops itself; the bundle event (delivered asynchronously) queues the pod
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
        .until(() -> h.container("p", "c0").getState().getWaiting() != null);
    ContainerStatus c = h.container("p", "c0");
    assertThat(c.getState().getWaiting().getReason()).isEqualTo("CrashLoopBackOff");
    assertThat(c.getLastState().getTerminated().getReason()).isEqualTo("Completed");
    assertThat(c.getLastState().getTerminated().getFinishedAt()).isEqualTo("2026-11-28T10:01:00Z");
    assertThat(condition(h.status("p"), "Ready")).isEqualTo("False");

    h.clock.advance(Duration.ofSeconds(10));
    h.feed("p");
    c = h.container("p", "c0");
    assertThat(c.getState().getRunning().getStartedAt()).isEqualTo("2026-11-28T10:01:10Z");
    assertThat(c.getRestartCount()).isEqualTo(1);
    assertThat(bundle.getState()).isEqualTo(Bundle.ACTIVE);
    assertThat(c.getContainerID()).isEqualTo("osgi://" + bundle.getBundleId());
  }

  @Test
  void withRestartPolicyNeverAStoppedBundleEndsThePod() throws Exception {
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    Pod pod = pod("p", "mvn:org.example/hello/1.0.0");
    pod.getSpec().setRestartPolicy("Never");
    h.run(pod);
    h.felix.context().getBundle("nodelet-pod:default/p/c0").stop();
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
        .until(() -> h.container("p", "c0").getState().getTerminated() != null);
    assertThat(h.container("p", "c0").getState().getTerminated().getReason()).isEqualTo("Completed");
    assertThat(h.status("p").getPhase()).isEqualTo("Succeeded");
  }

  @Test
  void deletionStopsAndUninstallsRecordsTheTerminationAndReleasesThePod() throws Exception {
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    h.run(pod("p", "mvn:org.example/hello/1.0.0"));
    Bundle bundle = h.felix.context().getBundle("nodelet-pod:default/p/c0");
    Pod deleting = h.client.pods().inNamespace("default").withName("p").get();
    deleting.getMetadata().setDeletionTimestamp("2026-11-28T10:00:05Z");
    deleting.getMetadata().setDeletionGracePeriodSeconds(30L);
    h.server.clearWrites();
    h.runtime.podUpdated(deleting); // as the pod source delivers a pod being deleted
    h.idle();
    assertThat(bundle.getState()).isEqualTo(Bundle.UNINSTALLED);
    assertThat(h.felix.context().getBundle("nodelet-pod:default/p/c0")).isNull();
    assertThat(h.client.pods().inNamespace("default").withName("p").get()).isNull();
    assertThat(h.podWrites()).extracting(w -> w.verb().toString()).containsExactly("PATCH", "DELETE");
  }

  @Test
  void aDeletedPodStaysUntilItsBundleStoppedThenGoes() throws Exception {
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    h.run(pod("p", "mvn:org.example/hello/1.0.0"));
    Bundle bundle = h.felix.context().getBundle("nodelet-pod:default/p/c0");
    java.util.List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (var ignored = h.client.pods().inNamespace("default").withName("p").watch(
        new io.fabric8.kubernetes.client.Watcher<Pod>() {
          @Override
          public void eventReceived(Action action, Pod pod) {
            seen.add(action + " bundle " + bundle.getState()); // the bundle's state when the pod object goes
          }

          @Override
          public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {
          }
        })) {
      h.client.pods().inNamespace("default").withName("p").delete(); // as kubectl delete pod p

      // the API server only marked it: the node stops the bundle, then deletes the pod with grace 0
      Pod marked = h.client.pods().inNamespace("default").withName("p").get();
      assertThat(marked.getMetadata().getDeletionTimestamp()).isNotNull();
      assertThat(bundle.getState()).isEqualTo(Bundle.ACTIVE);
      h.feed("p");
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30))
          .until(() -> seen.stream().anyMatch(e -> e.startsWith("DELETED")));
    }
    assertThat(seen).last().isEqualTo("DELETED bundle " + Bundle.UNINSTALLED);
    assertThat(h.client.pods().inNamespace("default").withName("p").get()).isNull();
  }

  @Test
  void aPodGoneFromTheNodeIsRemovedWithoutWrites() throws Exception {
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    Pod pod = h.run(pod("p", "mvn:org.example/hello/1.0.0"));
    h.server.clearWrites();
    h.runtime.podRemoved(pod);
    h.idle();
    assertThat(h.felix.context().getBundle("nodelet-pod:default/p/c0")).isNull();
    assertThat(h.podWrites()).isEmpty();
  }

  @Test
  void aRestartedNodeletAdoptsTheBundlesItInstalledAndKeepsTheirStatus() throws Exception {
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    h.run(pod("p", "mvn:org.example/hello/1.0.0"));
    long id = h.felix.context().getBundle("nodelet-pod:default/p/c0").getBundleId();
    String startedAt = h.container("p", "c0").getState().getRunning().getStartedAt();

    h.runtime.close();
    h.clock.advance(Duration.ofMinutes(5));
    h.runtime = h.newRuntime(110);
    h.server.clearWrites();
    h.feed("p");
    Bundle bundle = h.felix.context().getBundle("nodelet-pod:default/p/c0");
    assertThat(bundle.getBundleId()).isEqualTo(id);
    assertThat(bundle.getState()).isEqualTo(Bundle.ACTIVE);
    assertThat(h.container("p", "c0").getState().getRunning().getStartedAt()).isEqualTo(startedAt);
    assertThat(h.podWrites()).isEmpty();
  }

  @Test
  void bundlesOfPodsDeletedWhileNodeletWasAwayAreRemovedOnceThePodsAreListed() throws Exception {
    Path jar = TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    h.run(pod("p", "mvn:org.example/hello/1.0.0"));
    h.runtime.close();
    h.runtime = h.newRuntime(110);
    // left by a pod deleted while Nodelet was not running
    Bundle orphan = h.felix.context().installBundle("nodelet-pod:default/gone/c0",
        java.nio.file.Files.newInputStream(jar));
    orphan.start();
    java.nio.file.Files.createDirectories(h.work.resolve("pods/uid-of-gone"));
    java.util.concurrent.atomic.AtomicBoolean listed = new java.util.concurrent.atomic.AtomicBoolean();
    h.runtime.sweepWhenListed(listed::get, Duration.ofMillis(10), Duration.ZERO);
    h.feed("p");
    h.idle();
    assertThat(orphan.getState()).as("nothing is removed before the pods are listed").isEqualTo(Bundle.ACTIVE);

    listed.set(true);
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
        .until(() -> orphan.getState() == Bundle.UNINSTALLED);
    h.idle();
    assertThat(h.work.resolve("pods/uid-of-gone")).doesNotExist();
    assertThat(h.felix.context().getBundle("nodelet-pod:default/p/c0").getState()).isEqualTo(Bundle.ACTIVE);
  }

  @Test
  void aStatusThatCannotBeWrittenWhileTheApiServerIsAwayIsWrittenWhenItReturns() throws Exception {
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    h.run(pod("p", "mvn:org.example/hello/1.0.0"));
    Bundle bundle = h.felix.context().getBundle("nodelet-pod:default/p/c0");
    h.server.stop();
    try {
      bundle.stop();
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> h.runtime.writePending("default/p"));
      assertThat(bundle.getState()).isEqualTo(Bundle.RESOLVED);
    } finally {
      h.server.start();
    }
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() ->
        assertThat(h.container("p", "c0").getState().getWaiting().getReason()).isEqualTo("CrashLoopBackOff"));
    assertThat(h.runtime.writePending("default/p")).isFalse();
  }

  @Test
  void aNewImageReplacesTheContainersBundle() throws Exception {
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    TestBundles.write(h.repository, "org.example", "hello", "2.0.0", null);
    h.run(pod("p", "mvn:org.example/hello/1.0.0"));
    Bundle old = h.felix.context().getBundle("nodelet-pod:default/p/c0");
    h.clock.advance(Duration.ofMinutes(1));
    h.client.pods().inNamespace("default").withName("p").edit(p -> {
      p.getSpec().getContainers().get(0).setImage("mvn:org.example/hello/2.0.0");
      return p;
    });
    h.feed("p");
    assertThat(old.getState()).isEqualTo(Bundle.UNINSTALLED);
    Bundle replaced = h.felix.context().getBundle("nodelet-pod:default/p/c0");
    assertThat(replaced.getVersion().toString()).isEqualTo("2.0.0");
    assertThat(replaced.getState()).isEqualTo(Bundle.ACTIVE);
    ContainerStatus c = h.container("p", "c0");
    assertThat(c.getImage()).isEqualTo("mvn:org.example/hello/2.0.0");
    assertThat(c.getRestartCount()).isEqualTo(1);
    assertThat(c.getLastState().getTerminated().getFinishedAt()).isEqualTo("2026-11-28T10:01:00Z");
    assertThat(c.getState().getRunning().getStartedAt()).isEqualTo("2026-11-28T10:01:00Z");
  }

  @Test
  void aRestartedNodeletDoesNotStartAContainerThatEnded() throws Exception {
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    Pod pod = pod("p", "mvn:org.example/hello/1.0.0");
    pod.getSpec().setRestartPolicy("Never");
    h.run(pod);
    Bundle bundle = h.felix.context().getBundle("nodelet-pod:default/p/c0");
    bundle.stop();
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
        .until(() -> "Succeeded".equals(h.status("p").getPhase()));

    h.runtime.close();
    h.runtime = h.newRuntime(110);
    h.server.clearWrites();
    h.feed("p");
    assertThat(bundle.getState()).isEqualTo(Bundle.RESOLVED);
    assertThat(h.podWrites()).isEmpty();
  }
}
