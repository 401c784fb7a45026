package dev.nodelet.store.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.objectcache.ObjectStore;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchOptions;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.objectcache.testing.MutableClock;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * With {@code manualTicks()}, time-driven work (the watch store's idle sweep, a manager's watch deadlines) happens
 * only when the test ticks, judged by the clock it moves: the plain-Java API a test of Nodelet's users drives.
 */
class ManualTicksTest {

  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines

  private final MutableClock clock = new MutableClock();
  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension().withConfigMap("ns", "a", Map.of("k", "1"));

  @Test
  void anIdleWatchStopsWhenTheTestTicksAndNotBefore() {
    try (WatchStoreStrategy strategy = WatchStoreStrategy.builder(api.client()).clock(clock)
        .resyncInterval(Duration.ofMinutes(1)).manualTicks().build()) {
      ObjectStore<ConfigMap> store = strategy.createStore(ResourceType.CONFIG_MAPS);
      store.addReference("ns", "a", "pod-1");
      assertThat(store.get("ns", "a").getData()).containsEntry("k", "1");
      await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 1);

      clock.advance(Duration.ofMinutes(4));
      strategy.tick();
      assertThat(api.server().openWatches("configmaps")).as("4 of 5 idle minutes").isEqualTo(1);

      clock.advance(Duration.ofMinutes(2));
      assertThat(api.server().openWatches("configmaps")).as("no tick yet").isEqualTo(1);
      strategy.tick();
      await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 0);
      // the store stays open: the next get starts the watch again
      assertThat(store.get("ns", "a").getData()).containsEntry("k", "1");
      await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 1);
    }
    await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 0);
  }

  @Test
  void aWatchDeadlineEndsTheWatchWhenTheManagerTicks() throws InterruptedException {
    try (SwitchableObjectManager<ConfigMap> manager = ObjectManagers.configMaps(api.client()).clock(clock).manualTicks()
        .build()) {
      Instant deadline = clock.instant().plusSeconds(30);
      Watch<ConfigMap> watch = manager.watch(WatchOptions.<ConfigMap>builder().deadline(deadline).build());
      clock.advance(Duration.ofMinutes(1));
      assertThat(watch.poll(Duration.ZERO)).isNull();
      assertThat(watch.isEnded()).as("past the deadline, but not ticked").isFalse();
      manager.tick();
      assertThat(watch.poll(Duration.ofSeconds(1))).isNull();
      assertThat(watch.isEnded()).isTrue();
    }
  }
}
