package dev.nodelet.managers.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.ObjectReceipt;
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
 * Readiness of a node whose watch budget ({@code max.watches}) is spent, with time driven by a clock and manual
 * ticks: polled objects not fetched yet or past their time-to-live keep the node ready, since the next get fetches
 * them; a fetch that fails does not.
 */
class PolledReadinessTest {

  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines
  private static final Duration TTL = Duration.ofSeconds(30);
  private static final List<String> NAMES = List.of("a", "b", "c");

  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension();
  private final MutableClock clock = new MutableClock();
  private final CacheSyncHealthCheck check = new CacheSyncHealthCheck();
  private WatchStoreStrategy watch;
  private ConfigMapManagerComponent manager;
  private String watched;
  private List<String> polled;

  @BeforeEach
  void start() {
    NAMES.forEach(name -> put(name, "fast"));
    watch = WatchStoreStrategy.builder(api.client()).clock(clock).manualTicks().maxWatches(1).polledTtl(TTL)
        .build();
    manager = Defaults.configMapManager(api.client(), new ManagerMetricsService(), "watch", watch);
    check.addManager(manager);
    manager.registerPod(Pods.mounting("app", "u1", NAMES.toArray(String[]::new)));
    // one object holds the watch, the two others are polled
    watched = named(ObjectState.RUNNING).get(0);
    polled = named(ObjectState.POLLED);
    assertThat(polled).hasSize(2);
    manager.getConfigMap("ns", watched);
  }

  @AfterEach
  void stop() {
    manager.deactivate();
    watch.close();
  }

  private void put(String name, String mode) {
    api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
        .endMetadata().addToData("mode", mode).build()).createOr(existing -> existing.update());
  }

  private List<String> named(ObjectState state) {
    return manager.objects().stream().filter(object -> object.state().equals(Optional.of(state)))
        .map(CachedObject::name).toList();
  }

  private ObjectReceipt receipt(String name) {
    return manager.receipts().stream().flatMap(pod -> pod.objects().stream())
        .filter(object -> object.name().equals(name)).findFirst().orElseThrow();
  }

  @Test
  void polledObjectsKeepTheNodeReadyBeforeTheirFirstGetAndPastTheirTimeToLive() {
    // nobody read the polled objects yet: the next get fetches them
    Result unread = check.execute();
    assertThat(unread.getStatus()).as(messages(unread)).isEqualTo(Result.Status.OK);
    assertThat(messages(unread)).contains("configmaps: 3 objects of 1 pods fresh, 2 of them due for a fetch");
    assertThat(receipt(polled.get(0)).staleReason()).hasValueSatisfying(why -> assertThat(why)
        .isEqualTo("polled, not watched (the watch budget of 1 is spent): not fetched yet; the next get fetches it"));

    polled.forEach(name -> manager.getConfigMap("ns", name));
    assertThat(messages(check.execute())).contains("3 objects of 1 pods fresh (watch strategy)");

    // quiet past the time-to-live: the polled copies expired, the node stays ready
    clock.advance(TTL);
    Result quiet = check.execute();
    assertThat(quiet.getStatus()).as(messages(quiet)).isEqualTo(Result.Status.OK);
    assertThat(messages(quiet)).contains("2 of them due for a fetch");
    assertThat(polled).allSatisfy(name -> {
      ObjectReceipt receipt = receipt(name);
      assertThat(receipt.state()).contains(ObjectState.POLLED);
      assertThat(receipt.staleReason()).hasValueSatisfying(why -> assertThat(why).contains("its TTL of 30 s expired"));
      assertThat(receipt.refreshedOnNextGet()).isTrue();
    });

    // the next get fetches: a change made meanwhile is served
    put(polled.get(0), "slow");
    assertThat(manager.getConfigMap("ns", polled.get(0)).getData()).containsEntry("mode", "slow");
    assertThat(receipt(polled.get(0)).stale()).isFalse();
    assertThat(messages(check.execute())).contains("1 of them due for a fetch");
  }

  @Test
  void aPolledFetchThatFailsStillFailsReadiness() {
    polled.forEach(name -> manager.getConfigMap("ns", name));
    clock.advance(TTL);
    assertThat(check.execute().getStatus()).isEqualTo(Result.Status.OK);

    // the API server is away: the get serves the copy it holds and says its fetch failed
    api.server().stop();
    String failed = polled.get(1);
    assertThat(manager.getConfigMap("ns", failed).getData()).containsEntry("mode", "fast");
    Result failing = check.execute();
    assertThat(failing.getStatus()).as(messages(failing)).isEqualTo(Result.Status.TEMPORARILY_UNAVAILABLE);
    assertThat(messages(failing)).contains("ns/" + failed
        + ": polled, not watched (the watch budget of 1 is spent): its last fetch failed");
    assertThat(messages(failing)).doesNotContain("ns/" + polled.get(0) + ":");

    // the API server is back: the get fetches, the watch resumes, the node is ready again
    api.server().start();
    assertThat(manager.getConfigMap("ns", failed).getData()).containsEntry("mode", "fast");
    await().atMost(WAIT).until(check::execute, r -> r.getStatus() == Result.Status.OK);
  }

  private static String messages(Result result) {
    StringBuilder text = new StringBuilder();
    result.forEach(entry -> text.append(entry.getMessage()).append('\n'));
    return text.toString();
  }
}
