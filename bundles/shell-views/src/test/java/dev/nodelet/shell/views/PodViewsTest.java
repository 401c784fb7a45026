package dev.nodelet.shell.views;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.pods.ContainerInfo;
import dev.nodelet.pods.ContainerInfo.BundleInfo;
import dev.nodelet.pods.ContainerInfo.State;
import dev.nodelet.pods.PodInfo;
import dev.nodelet.pods.PodsStatus;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PodViewsTest {

  static final Instant STARTED = Instant.parse("2026-11-28T10:00:00Z");
  static final Instant FINISHED = Instant.parse("2026-11-28T10:05:00Z");

  /** Two pods in two namespaces: one running, one waiting and one terminated container, one rejected pod. */
  static final PodsStatus STATUS = () -> List.of(
      new PodInfo("default", "web", "uid-1", "Running", "", List.of(
          new ContainerInfo("app", "mvn:org.example/app/1.0.0", State.RUNNING, "", "", STARTED, null, 0, 0, true,
              "org.example.app", Optional.of(new BundleInfo(42, "org.example.app", "1.0.0", "ACTIVE"))),
          new ContainerInfo("side", "mvn:org.example/side/2.0.0", State.WAITING, "ImagePullBackOff",
              "image mvn:org.example/side/2.0.0\nnot found", null, null, 0, 0, false, "dev.nodelet.pod.side",
              Optional.empty()),
          new ContainerInfo("job", "mvn:org.example/job/1.0.0", State.TERMINATED, "Error", "activator failed",
              STARTED, FINISHED, 1, 3, false, "dev.nodelet.pod.job",
              Optional.of(new BundleInfo(43, "org.example.job", "1.0.0", "RESOLVED"))))),
      new PodInfo("edge", "full", "uid-2", "Failed", "OutOfpods", List.of(
          new ContainerInfo("c0", "mvn:org.example/app/1.0.0", State.WAITING, "ContainerCreating", "", null, null,
              0, 0, false, "dev.nodelet.pod.c0", Optional.empty()))));

  @Test
  void eachPodThenEachContainerWithStateRestartsReadinessImageBundleAndPid() {
    assertThat(PodViews.pods(STATUS, null).lines()).containsExactly(
        "default/web  Running  uid=uid-1",
        "  app  running since 2026-11-28T10:00:00Z  restarts=0  ready=true  image=mvn:org.example/app/1.0.0"
            + "  bundle=42 org.example.app 1.0.0 ACTIVE  pid=org.example.app",
        "  side  waiting ImagePullBackOff: image mvn:org.example/side/2.0.0 not found  restarts=0  ready=false"
            + "  image=mvn:org.example/side/2.0.0  bundle=-  pid=dev.nodelet.pod.side",
        "  job  terminated Error exit=1 at 2026-11-28T10:05:00Z: activator failed  restarts=3  ready=false"
            + "  image=mvn:org.example/job/1.0.0  bundle=43 org.example.job 1.0.0 RESOLVED  pid=dev.nodelet.pod.job",
        "edge/full  Failed (OutOfpods)  uid=uid-2",
        "  c0  waiting ContainerCreating  restarts=0  ready=false  image=mvn:org.example/app/1.0.0  bundle=-"
            + "  pid=dev.nodelet.pod.c0");
  }

  @Test
  void aNamespaceKeepsOnlyItsPods() {
    assertThat(PodViews.pods(STATUS, "edge").lines()).hasSize(2).first()
        .isEqualTo("edge/full  Failed (OutOfpods)  uid=uid-2");
    assertThat(PodViews.pods(STATUS, "other")).isEqualTo("no pods run as bundles in namespace other\n");
    assertThat(PodViews.pods(List::of, null)).isEqualTo("no pods run as bundles\n");
  }

  @Test
  void withoutThePodsComponentItSaysNodeModePodsAreOffAndHowToTurnThemOn() {
    assertThat(PodViews.pods(null, null)).isEqualTo(PodViews.OFF)
        .startsWith("node mode pods are off").contains("etc/dev.nodelet.pods.cfg");
    assertThat(PodViews.pods(null, "default")).isEqualTo(PodViews.OFF);
  }
}
