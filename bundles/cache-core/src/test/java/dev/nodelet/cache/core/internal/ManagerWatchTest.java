package dev.nodelet.cache.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.cache.core.GetStrategy;
import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.objectcache.ObjectNotFoundException;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchEvent;
import dev.nodelet.objectcache.WatchOptions;
import dev.nodelet.objectcache.WatchStatistics;
import dev.nodelet.objectcache.testing.MutableClock;
import dev.nodelet.cache.core.testing.RecordingStrategy;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Watches through a manager on the built-in {@code get} strategy, whose gets report in the calling thread: what a get
 * observes is in the watch when the get returns.
 */
class ManagerWatchTest {

  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines

  private EmbeddedApiServer server;
  private KubernetesClient client;
  private SwitchableObjectManager<ConfigMap> manager;
  private Watch<ConfigMap> watch;

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
    client = server.newClient();
    manager = ObjectManagers.configMaps(client).clock(new MutableClock()).build();
    put("a", "1");
    put("b", "1");
    watch = manager.watch(WatchOptions.<ConfigMap>builder().build());
  }

  @AfterEach
  void stop() {
    watch.close();
    manager.close();
    client.close();
    server.close();
  }

  private String put(String name, String value) {
    return client.configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
        .endMetadata().addToData("k", value).build()).createOr(e -> e.update()).getMetadata().getResourceVersion();
  }

  private static Pod pod(String uid, String configMap) {
    return new PodBuilder().withNewMetadata().withNamespace("ns").withName("p-" + uid).withUid(uid).endMetadata()
        .withNewSpec().addNewVolume().withName("v").withNewConfigMap().withName(configMap).endConfigMap()
        .endVolume().endSpec().build();
  }

  /** Pod {@code uid} references ConfigMap {@code name} and a get observes it, which adds it to the watched set. */
  private void referenceAndGet(String uid, String name) {
    manager.registerPod(pod(uid, name));
    manager.get("ns", name);
  }

  /**
   * The events the watch holds now, as "TYPE name@resourceVersion" with the object's version (the event's is the
   * cache's revision, which starts above the embedded server's first versions).
   */
  private List<String> events() throws InterruptedException {
    List<String> events = new ArrayList<>();
    WatchEvent<ConfigMap> event;
    while ((event = watch.poll(Duration.ZERO)) != null) {
      events.add(event.type() + " " + event.object().getMetadata().getName() + "@"
          + event.object().getMetadata().getResourceVersion());
    }
    return events;
  }

  @Test
  void aWatchSeesWhatGetsObserveOfReferencedObjects() throws InterruptedException {
    manager.get("ns", "a");
    assertThat(events()).as("no pod references a yet").isEmpty();

    manager.registerPod(pod("u1", "a"));
    String v1 = manager.get("ns", "a").getMetadata().getResourceVersion();
    manager.get("ns", "a");
    assertThat(events()).containsExactly("ADDED a@" + v1);

    String v2 = put("a", "2");
    manager.get("ns", "a");
    assertThat(events()).containsExactly("MODIFIED a@" + v2);

    client.configMaps().inNamespace("ns").withName("a").delete();
    assertThatThrownBy(() -> manager.get("ns", "a")).isInstanceOf(ObjectNotFoundException.class);
    assertThat(events()).hasSize(1).first().asString().startsWith("DELETED a@");

    String v3 = put("a", "3");
    manager.get("ns", "a");
    assertThat(events()).containsExactly("ADDED a@" + v3);
  }

  @Test
  void anObjectNoPodReferencesAnyMoreLeavesTheWatchedSet() throws InterruptedException {
    manager.registerPod(pod("u1", "a"));
    manager.registerPod(pod("u2", "a"));
    manager.get("ns", "a");
    assertThat(events()).hasSize(1);

    manager.unregisterPod(pod("u1", "a"));
    manager.get("ns", "a");
    assertThat(events()).as("u2 still references it").isEmpty();

    manager.unregisterPod(pod("u2", "a"));
    WatchEvent<ConfigMap> deleted = watch.poll(WAIT);
    assertThat(deleted).isNotNull();
    assertThat(deleted.type()).isEqualTo(WatchEvent.Type.DELETED);
    assertThat(deleted.object().getMetadata().getName()).isEqualTo("a");
    manager.get("ns", "a");
    assertThat(events()).isEmpty();
  }

  @Test
  void watchesSurviveStrategyChanges() throws InterruptedException {
    referenceAndGet("u1", "a");
    assertThat(events()).hasSize(1);

    // a strategy whose stores report nothing (it only has the one-argument createStore): quiet, but open
    manager.useStrategy("recording", new RecordingStrategy("recording", client,
        Collections.synchronizedList(new ArrayList<>())));
    String v2 = put("a", "2");
    manager.get("ns", "a");
    assertThat(events()).isEmpty();
    assertThat(watch.isEnded()).isFalse();

    manager.useStrategy("get", new GetStrategy(client));
    manager.get("ns", "a");
    assertThat(events()).containsExactly("MODIFIED a@" + v2);
  }

  @Test
  void statisticsCountWatchersInitialEventsAndQueuedEvents() throws InterruptedException {
    referenceAndGet("u1", "a");
    referenceAndGet("u2", "b");
    // the first watch holds ADDED a and ADDED b, the second the same two as initial events
    try (Watch<ConfigMap> initial = manager.watch(WatchOptions.<ConfigMap>builder().sendInitialEvents(true)
        .build())) {
      assertThat(manager.watchStatistics()).isEqualTo(new WatchStatistics(2, 0, 2, 4, 2));
      assertThat(initial.poll(Duration.ZERO)).isNotNull();
      assertThat(manager.watchStatistics()).isEqualTo(new WatchStatistics(2, 0, 2, 3, 2));
    }
    assertThat(manager.watchStatistics()).isEqualTo(new WatchStatistics(1, 0, 2, 2, 2));
    assertThat(events()).hasSize(2);
    assertThat(manager.watchStatistics()).isEqualTo(new WatchStatistics(1, 0, 2, 0, 0));
  }

  @Test
  void closingEndsEveryWatchAndLeavesNoThread() throws InterruptedException {
    referenceAndGet("u1", "a");
    manager.unregisterPod(pod("u1", "a")); // starts the removal thread
    assertThat(watch.poll(WAIT)).isNotNull();
    assertThat(watch.poll(WAIT)).extracting(WatchEvent::type).isEqualTo(WatchEvent.Type.DELETED);

    manager.close();

    assertThat(watch.poll(WAIT)).isNull();
    assertThat(watch.isEnded()).isTrue();
    // the timer thread is joined; the removal thread ends right after its executor reports termination
    await().atMost(WAIT).untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet())
        .extracting(Thread::getName)
        .noneMatch(name -> name.startsWith("nodelet-watch-") && name.endsWith("-configmaps")));
    assertThatThrownBy(() -> manager.watch(WatchOptions.<ConfigMap>builder().build()))
        .isInstanceOf(IllegalStateException.class).hasMessage("the configmaps manager is closed");
  }
}
