package dev.nodelet.managers.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.ObjectReceipt;
import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.PodReceipt;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchEvent;
import dev.nodelet.objectcache.WatchOptions;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.persistence.Persistence;
import dev.nodelet.store.watch.WatchStoreStrategy;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node restarted with persistence while the API server is away, then the server's return: the objects restored
 * from disk reach the receipts and the managers' watches as any observed object, whether they changed meanwhile, a
 * bookmark confirms them unchanged, or their pod registers only after that confirmation.
 */
class OfflineRestartTest {

  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines

  /** Bookmarks often, so that an unchanged object is confirmed within the test's time. */
  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension(server -> server.bookmarkInterval(Duration.ofMillis(200)));

  @TempDir
  Path dir;

  private NodeDisk disk;
  /** The resourceVersion of each object as the first run stored it. */
  private final Map<String, String> stored = new HashMap<>();

  @BeforeEach
  void keyAndObjects() throws IOException {
    disk = new NodeDisk(dir);
    for (String name : List.of("unchanged", "changed", "late")) {
      stored.put(name, api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder()
          .withNewMetadata().withName(name).endMetadata().addToData("mode", "fast").build()).create()
          .getMetadata().getResourceVersion());
    }
  }

  private ConfigMapManagerComponent manager(WatchStoreStrategy strategy) {
    return Defaults.configMapManager(api.client(), new ManagerMetricsService(), "watch", strategy);
  }

  /** The next event of the watch as "TYPE name@resourceVersion", or null if none comes in time. */
  private static String next(Watch<ConfigMap> events) throws InterruptedException {
    WatchEvent<ConfigMap> event = events.poll(WAIT);
    return event == null ? null : event.type() + " " + event.object().getMetadata().getName() + "@"
        + event.object().getMetadata().getResourceVersion();
  }

  private static ObjectReceipt receipt(ConfigMapManagerComponent manager, String pod, String name) {
    for (PodReceipt receipt : manager.receipts()) {
      if (receipt.name().equals(pod)) {
        return receipt.objects().stream().filter(object -> object.name().equals(name)).findFirst().orElseThrow();
      }
    }
    throw new AssertionError("no receipt of pod " + pod);
  }

  private static Optional<ObjectState> state(ConfigMapManagerComponent manager, String name) {
    return manager.objects().stream().filter(object -> object.name().equals(name)).findFirst()
        .flatMap(CachedObject::state);
  }

  @Test
  void restoredObjectsAreReportedLikeObservedOnesOfflineAndWhenTheServerReturns() throws Exception {
    // the first run: web references unchanged and changed, batch references late; all are read and stored
    try (Persistence persistence = disk.open();
        WatchStoreStrategy strategy = WatchStoreStrategy.builder(api.client()).persistence(persistence).build()) {
      ConfigMapManagerComponent manager = manager(strategy);
      try {
        manager.registerPod(Pods.mounting("web", "u1", "unchanged", "changed"));
        manager.registerPod(Pods.mounting("batch", "u2", "late"));
        List.of("unchanged", "changed", "late").forEach(name -> manager.getConfigMap("ns", name));
      } finally {
        manager.deactivate();
      }
    }
    // while the node is down, changed changes; then the API server goes away too
    String changedVersion = api.client().configMaps().inNamespace("ns").withName("changed")
        .edit(cm -> new ConfigMapBuilder(cm).addToData("mode", "slow").build()).getMetadata().getResourceVersion();
    api.server().stop();

    try (Persistence persistence = disk.open();
        WatchStoreStrategy strategy = WatchStoreStrategy.builder(api.client()).persistence(persistence)
            .restoredReferenceGrace(Duration.ofMinutes(10)).build()) {
      ConfigMapManagerComponent manager = manager(strategy);
      try (Watch<ConfigMap> events = manager.watch(WatchOptions.<ConfigMap>builder().build())) {
        // offline, web registers again: its objects restored from disk are reported to the watch at once
        manager.registerPod(Pods.mounting("web", "u1", "unchanged", "changed"));
        assertThat(List.of(next(events), next(events))).containsExactlyInAnyOrder(
            "ADDED unchanged@" + stored.get("unchanged"), "ADDED changed@" + stored.get("changed"));
        ObjectReceipt offline = receipt(manager, "web", "unchanged");
        assertThat(offline.state()).contains(ObjectState.FROM_DISK);
        assertThat(offline.resourceVersion()).contains(stored.get("unchanged"));
        assertThat(offline.uid()).isPresent();

        // the API server returns: changed arrives as a change, unchanged is confirmed by a bookmark
        api.server().start();
        assertThat(next(events)).isEqualTo("MODIFIED changed@" + changedVersion);
        await().atMost(WAIT).untilAsserted(() -> {
          for (String name : List.of("unchanged", "changed")) {
            ObjectReceipt fresh = receipt(manager, "web", name);
            assertThat(fresh.state()).as(name).contains(ObjectState.RUNNING);
            assertThat(fresh.staleReason()).as(name).isEmpty();
            assertThat(fresh.seen()).as(name).isPresent();
          }
        });
        ObjectReceipt unchanged = receipt(manager, "web", "unchanged");
        assertThat(unchanged.resourceVersion()).contains(stored.get("unchanged"));
        assertThat(unchanged.uid()).isEqualTo(offline.uid());
        assertThat(receipt(manager, "web", "changed").resourceVersion()).contains(changedVersion);

        // late is confirmed before its pod registers again: the pod's registration reports it
        await().atMost(WAIT).until(() -> state(manager, "late").equals(Optional.of(ObjectState.RUNNING)));
        manager.registerPod(Pods.mounting("batch", "u2", "late"));
        assertThat(next(events)).isEqualTo("ADDED late@" + stored.get("late"));
        await().atMost(WAIT).untilAsserted(() -> {
          ObjectReceipt late = receipt(manager, "batch", "late");
          assertThat(late.resourceVersion()).contains(stored.get("late"));
          assertThat(late.uid()).isPresent();
          assertThat(late.state()).contains(ObjectState.RUNNING);
          assertThat(late.staleReason()).isEmpty();
        });

        // nothing else: no event was lost or doubled
        assertThat(events.poll(Duration.ofMillis(300))).isNull();
      } finally {
        manager.deactivate();
      }
    }
  }
}
