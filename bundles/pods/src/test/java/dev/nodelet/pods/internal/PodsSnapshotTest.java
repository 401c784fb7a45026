package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.pods.ContainerInfo;
import dev.nodelet.pods.PodInfo;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;

/** What shells show of the pods ({@code PodsStatus}): the runtime's own state, read on its executor. */
class PodsSnapshotTest {

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

  @Test
  void eachContainerShowsItsStateBundleAndPid() throws Exception {
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    TestBundles.write(h.repository, "org.example", "bad", "1.0.0", TestBundles.ThrowingActivator.class);
    var pod = PodLifecycleTest.pod("p", "mvn:org.example/hello/1.0.0", "mvn:org.example/bad/1.0.0",
        "mvn:org.example/missing/1.0.0");
    pod.getMetadata().setAnnotations(java.util.Map.of("pods.nodelet.dev/pid.c0", "org.example.hello"));
    h.run(pod);

    List<PodInfo> pods = h.runtime.status();
    assertThat(pods).hasSize(1);
    PodInfo info = pods.get(0);
    assertThat(info.namespace()).isEqualTo("default");
    assertThat(info.name()).isEqualTo("p");
    assertThat(info.phase()).isEqualTo(h.status("p").getPhase()).isNotNull();
    assertThat(info.reason()).isEmpty();
    assertThat(info.uid()).isEqualTo(h.client.pods().inNamespace("default").withName("p").get().getMetadata()
        .getUid());

    ContainerInfo hello = info.containers().get(0);
    Bundle bundle = h.felix.context().getBundle("nodelet-pod:default/p/c0");
    assertThat(hello.state()).isEqualTo(ContainerInfo.State.RUNNING);
    assertThat(hello.startedAt()).isEqualTo(Instant.parse("2026-11-28T10:00:00Z"));
    assertThat(hello.ready()).isTrue();
    assertThat(hello.reason()).isEmpty();
    assertThat(hello.configurationPid()).isEqualTo("org.example.hello");
    assertThat(hello.image()).isEqualTo("mvn:org.example/hello/1.0.0");
    assertThat(hello.bundle()).contains(new ContainerInfo.BundleInfo(bundle.getBundleId(), "org.example.hello",
        "1.0.0", "ACTIVE"));

    ContainerInfo bad = info.containers().get(1);
    assertThat(bad.state()).isEqualTo(ContainerInfo.State.WAITING);
    assertThat(bad.reason()).isEqualTo("CrashLoopBackOff");
    assertThat(bad.message()).isEqualTo(h.container("p", "c1").getState().getWaiting().getMessage());
    assertThat(bad.ready()).isFalse();
    assertThat(bad.configurationPid()).isEqualTo("dev.nodelet.pod.c1");
    Bundle badBundle = h.felix.context().getBundle("nodelet-pod:default/p/c1");
    assertThat(badBundle.getState()).isNotEqualTo(Bundle.ACTIVE);
    assertThat(bad.bundle()).hasValueSatisfying(b -> assertThat(b.id()).isEqualTo(badBundle.getBundleId()))
        .hasValueSatisfying(b -> assertThat(b.state()).isIn("INSTALLED", "RESOLVED"));

    ContainerInfo missing = info.containers().get(2);
    assertThat(missing.state()).isEqualTo(ContainerInfo.State.WAITING);
    assertThat(missing.reason()).isIn("ErrImagePull", "ImagePullBackOff")
        .isEqualTo(h.container("p", "c2").getState().getWaiting().getReason());
    assertThat(missing.message()).contains("org.example/missing/1.0.0");
    assertThat(missing.bundle()).isEmpty();
  }

  @Test
  void aClosedRuntimeHasNoPods() {
    h.runtime.close();
    assertThat(h.runtime.status()).isEmpty();
  }
}
