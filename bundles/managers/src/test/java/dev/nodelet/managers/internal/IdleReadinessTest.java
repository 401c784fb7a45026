package dev.nodelet.managers.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.objectcache.CacheSyncException;
import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.objectcache.testing.MutableClock;
import dev.nodelet.store.watch.WatchStoreStrategy;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.felix.hc.api.Result;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Readiness of a quiet node on the watch strategy, with time driven by a clock and manual ticks: watches that stop
 * because nobody reads their objects keep the node ready; a watch or a list that fails does not.
 */
class IdleReadinessTest {

  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines
  private static final Duration RESYNC = Duration.ofSeconds(10); // idle after 5 of these, at least 1 minute
  private static final List<String> NAMES = List.of("a", "b", "c");

  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension();
  private final MutableClock clock = new MutableClock();
  private final CacheSyncHealthCheck check = new CacheSyncHealthCheck();
  private WatchStoreStrategy watch;
  private ConfigMapManagerComponent manager;

  @BeforeEach
  void start() {
    for (String name : NAMES) {
      api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
          .endMetadata().addToData("mode", "fast").build()).create();
    }
    watch = WatchStoreStrategy.builder(api.client()).clock(clock).manualTicks().resyncInterval(RESYNC).build();
    manager = Defaults.configMapManager(api.client(), new ManagerMetricsService(), "watch", watch);
    check.addManager(manager);
    manager.registerPod(Pods.mounting("app", "u1", NAMES.toArray(String[]::new)));
    NAMES.forEach(name -> manager.getConfigMap("ns", name));
  }

  @AfterEach
  void stop() {
    manager.deactivate();
    watch.close();
  }

  /** Advances the clock by {@code intervals} resync intervals, ticking the strategy after each. */
  private void quiet(int intervals) {
    for (int i = 0; i < intervals; i++) {
      clock.advance(RESYNC);
      watch.tick();
    }
  }

  private List<Optional<ObjectState>> states() {
    return manager.objects().stream().map(CachedObject::state).toList();
  }

  @Test
  void aQuietNodeStaysReadyPastSeveralResyncIntervals() {
    await().atMost(WAIT).until(check::execute, r -> r.getStatus() == Result.Status.OK);

    // nobody reads: after the idle time every watch stops, on the API server too
    quiet(30);
    assertThat(states()).containsOnly(Optional.of(ObjectState.IDLE));
    await().atMost(WAIT).until(() -> api.server().openWatches("configmaps") == 0);
    Result idle = check.execute();
    assertThat(idle.getStatus()).as(messages(idle)).isEqualTo(Result.Status.OK);
    assertThat(messages(idle)).contains("configmaps: 3 objects of 1 pods fresh, 3 of them idle");
    // the receipts still tell that nothing keeps them current
    assertThat(manager.receipts().get(0).objects()).allSatisfy(receipt -> {
      assertThat(receipt.state()).contains(ObjectState.IDLE);
      assertThat(receipt.staleReason()).hasValueSatisfying(reason -> assertThat(reason).contains("idle"));
    });

    // a get watches its object again; the others stay idle and the node ready
    assertThat(manager.getConfigMap("ns", "a").getData()).containsEntry("mode", "fast");
    quiet(3);
    assertThat(check.execute().getStatus()).isEqualTo(Result.Status.OK);
    assertThat(messages(check.execute())).contains("2 of them idle");
  }

  @Test
  void aWatchOrAListThatFailsStillFailsReadiness() {
    quiet(30);
    assertThat(states()).containsOnly(Optional.of(ObjectState.IDLE));
    assertThat(check.execute().getStatus()).isEqualTo(Result.Status.OK);

    // an object that cannot be synced: the get's fresh list fails
    api.server().stop();
    assertThatThrownBy(() -> manager.getConfigMap("ns", "b")).isInstanceOf(CacheSyncException.class);
    Result failing = await().atMost(WAIT).until(check::execute,
        r -> r.getStatus() == Result.Status.TEMPORARILY_UNAVAILABLE);
    assertThat(messages(failing)).contains("configmaps: 1 of 3 objects stale: ns/b: its list fails");

    // the API server is back: the list succeeds, the node is ready again
    api.server().start();
    await().atMost(WAIT).until(check::execute, r -> r.getStatus() == Result.Status.OK);
    assertThat(manager.getConfigMap("ns", "b").getData()).containsEntry("mode", "fast");

    // a watch that is cut stays a failure while it is down
    api.server().stop();
    failing = await().atMost(WAIT).until(check::execute,
        r -> r.getStatus() == Result.Status.TEMPORARILY_UNAVAILABLE);
    assertThat(messages(failing)).contains("ns/b: its watch is down");
    api.server().start();
    await().atMost(WAIT).until(check::execute, r -> r.getStatus() == Result.Status.OK);
  }

  private static String messages(Result result) {
    StringBuilder text = new StringBuilder();
    result.forEach(entry -> text.append(entry.getMessage()).append('\n'));
    return text.toString();
  }
}
