package dev.nodelet.podsource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.osgi.util.converter.Converters;

class PodSourceTest {

  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines
  private static final String SELECTOR = "spec.nodeName=node-a";

  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension();
  private ReflectorEngine reflectors;
  private PodSource source;

  @BeforeEach
  void start() {
    reflectors = ReflectorEngine.builder(api.client()).build();
  }

  @AfterEach
  void stop() {
    if (source != null) {
      source.close();
    }
    reflectors.close();
  }

  private void put(String name, String node, String version) {
    Pod pod = new PodBuilder().withNewMetadata().withNamespace("ns").withName(name).addToLabels("v", version)
        .endMetadata().withNewSpec().withNodeName(node).addNewContainer().withName("c").withImage("i").endContainer()
        .endSpec().build();
    api.client().pods().inNamespace("ns").resource(pod).createOr(e -> e.update());
  }

  private void delete(String name) {
    api.client().pods().inNamespace("ns").withName(name).withGracePeriod(0).delete(); // gone, as its node releases it
  }

  private static boolean podsourceThreadAlive() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().startsWith("nodelet-podsource-") && t.isAlive());
  }

  @Test
  void registersThePodsOfThisNodeOnUpdateAndUnregistersOnDelete() {
    put("mine", "node-a", "1");
    put("theirs", "node-b", "1");
    source = PodSource.builder(reflectors, "node-a").listenerThreads(2).build();
    RecordingListener listener = new RecordingListener();
    source.addListener(listener);
    source.start();
    await().atMost(WAIT).until(() -> listener.calls().equals(List.of("register ns/mine v=1")));
    assertThat(source.pods()).extracting(p -> p.getMetadata().getName()).containsExactly("mine");

    put("mine", "node-a", "2");
    await().atMost(WAIT).until(() -> listener.calls().size() == 2);
    delete("mine");
    put("theirs", "node-b", "2");
    await().atMost(WAIT).until(() -> listener.calls().size() == 3);
    assertThat(listener.calls()).containsExactly("register ns/mine v=1", "register ns/mine v=2",
        "unregister ns/mine");
    assertThat(source.pods()).isEmpty();
  }

  @Test
  void listenerThreadsOutOfRangeAreRefusedWithTheKeyNamed() {
    assertThatThrownBy(() -> PodSource.builder(reflectors, "node-a").listenerThreads(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("listener.threads must be at least 1, was 0");
    source = PodSource.builder(reflectors, "node-a").build();
    assertThat(source.listenerThreads()).isEqualTo(2);
    assertThatThrownBy(() -> source.setListenerThreads(65))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("listener.threads must be at most 64, was 65");
    assertThat(source.listenerThreads()).isEqualTo(2);
  }

  @Test
  void aLateListenerReceivesTheCurrentPods() {
    put("a", "node-a", "1");
    put("b", "node-a", "1");
    source = PodSource.builder(reflectors, "node-a").listenerThreads(2).build();
    source.start();
    RecordingListener early = new RecordingListener();
    source.addListener(early);
    await().atMost(WAIT).until(() -> early.calls().size() == 2);
    delete("a");
    await().atMost(WAIT).until(() -> early.calls().size() == 3);

    RecordingListener late = new RecordingListener();
    source.addListener(late);
    await().atMost(WAIT).until(() -> late.calls().equals(List.of("register ns/b v=1")));
  }

  @Test
  void aSlowListenerHoldsUpNobodyAndLaterGetsTheLatestState() {
    source = PodSource.builder(reflectors, "node-a").listenerThreads(2).build();
    RecordingListener slow = new RecordingListener();
    RecordingListener fast = new RecordingListener();
    slow.block();
    source.addListener(slow);
    source.addListener(fast);
    source.start();

    put("p", "node-a", "1");
    await().atMost(WAIT).until(() -> fast.calls().size() == 1);
    put("p", "node-a", "2");
    put("p", "node-a", "3");
    put("q", "node-a", "1");
    await().atMost(WAIT).until(() -> fast.calls().size() == 4);
    assertThat(slow.calls()).isEmpty();

    slow.unblock();
    // the first call was already under way; the versions queued behind it collapse into the latest one
    await().atMost(WAIT).until(() -> slow.calls().size() == 3);
    assertThat(slow.calls()).containsExactly("register ns/p v=1", "register ns/p v=3", "register ns/q v=1");
  }

  @Test
  void aFailingListenerIsLoggedAndKeepsReceivingEvents() {
    source = PodSource.builder(reflectors, "node-a").listenerThreads(1).build();
    RecordingListener failing = new RecordingListener();
    RecordingListener healthy = new RecordingListener();
    failing.fail();
    source.addListener(failing);
    source.addListener(healthy);
    source.start();
    put("p", "node-a", "1");
    put("q", "node-a", "1");
    await().atMost(WAIT).until(() -> healthy.calls().size() == 2 && failing.calls().size() == 2);
  }

  @Test
  void aRemovedListenerHearsNothingMore() {
    source = PodSource.builder(reflectors, "node-a").listenerThreads(2).build();
    RecordingListener listener = new RecordingListener();
    RecordingListener other = new RecordingListener();
    source.addListener(listener);
    source.addListener(other);
    source.start();
    put("p", "node-a", "1");
    await().atMost(WAIT).until(() -> listener.calls().size() == 1);
    source.removeListener(listener);
    put("q", "node-a", "1");
    await().atMost(WAIT).until(() -> other.calls().size() == 2);
    assertThat(listener.calls()).containsExactly("register ns/p v=1");
  }

  @Test
  void closingEndsTheWatchAndEveryThread() {
    source = PodSource.builder(reflectors, "node-a").listenerThreads(2).build();
    RecordingListener listener = new RecordingListener();
    source.addListener(listener);
    source.start();
    put("p", "node-a", "1");
    await().atMost(WAIT).until(() -> listener.calls().size() == 1 && api.server().openWatches("pods", SELECTOR) == 1);
    assertThat(podsourceThreadAlive()).isTrue();

    source.close();
    await().atMost(WAIT).until(() -> api.server().openWatches("pods", SELECTOR) == 0 && !podsourceThreadAlive());
    put("q", "node-a", "1");
    assertThat(listener.calls()).containsExactly("register ns/p v=1");
  }
}
