package dev.nodelet.pods.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;

/** The runtime's status writes go off its work thread: a slow write holds neither the work nor other pods. */
class PodStatusWritesTest {

  @TempDir
  Path dir;
  PodsHarness h;
  StatusWriterTest.GatedApi api;

  @BeforeEach
  void start() throws Exception {
    h = new PodsHarness(dir);
    h.runtime.close();
    api = new StatusWriterTest.GatedApi(new KubePodApi(h.client));
    h.runtime = h.newRuntime(110, api);
  }

  @AfterEach
  void stop() throws Exception {
    api.open.countDown();
    h.close();
  }

  private Pod create(String name) {
    Pod pod = PodLifecycleTest.pod(name, "mvn:org.example/hello/1.0.0");
    pod.getSpec().setNodeName(PodsHarness.NODE);
    Pod created = h.client.pods().inNamespace("default").resource(pod).create();
    h.configMaps.registerPod(created);
    h.secrets.registerPod(created);
    h.runtime.podUpdated(created);
    return created;
  }

  @Test
  void aStatusWriteThatHangsHoldsNeitherTheWorkNorOtherPodsAndItsNewestStatusWins() throws Exception {
    TestBundles.write(h.repository, "org.example", "hello", "1.0.0", null);
    api.gated = "slow";
    create("slow");
    assertThat(api.entered.await(30, TimeUnit.SECONDS)).as("the slow pod's write is under way").isTrue();
    Bundle slow = h.felix.context().getBundle("nodelet-pod:default/slow/c0");
    assertThat(slow.getState()).isEqualTo(Bundle.ACTIVE);

    List<String> others = IntStream.range(0, 5).mapToObj(i -> "p" + i).toList();
    others.forEach(this::create);
    Awaitility.await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> others.stream()
        .allMatch(name -> "Running".equals(h.status(name).getPhase())));
    assertThat(api.written).as("one write of the slow pod, hanging").hasSize(1);
    PodStatus hanging = h.status("slow");
    assertThat(hanging == null || hanging.getContainerStatuses() == null || hanging.getContainerStatuses().isEmpty())
        .as("nothing written yet for the slow pod").isTrue();

    slow.stop(); // the container ends: newer statuses of the slow pod while its first write still hangs
    Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> h.runtime.status().stream()
        .filter(p -> p.name().equals("slow")).anyMatch(p -> "CrashLoopBackOff".equals(p.containers().get(0).reason())));

    api.open.countDown();
    h.idle();
    PodStatus written = h.status("slow");
    assertThat(written.getContainerStatuses().get(0).getState().getWaiting().getReason())
        .as("the newest status is what the API server has").isEqualTo("CrashLoopBackOff");
    assertThat(api.written).as("after the hanging write, only the newest status").hasSize(2);
    assertThat(StatusWriter.same(api.written.get(1), written)).isTrue();
  }
}
