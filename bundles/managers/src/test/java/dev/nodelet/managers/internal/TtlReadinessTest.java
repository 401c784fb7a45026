package dev.nodelet.managers.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.objectcache.ObjectReceipt;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.objectcache.testing.MutableClock;
import dev.nodelet.store.ttl.TtlStoreStrategy;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.List;
import org.apache.felix.hc.api.Result;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Readiness of a quiet node on the ttl strategy, with time driven by a clock: copies whose time-to-live expired keep
 * the node ready, since the next get fetches them; a fetch that fails does not.
 */
class TtlReadinessTest {

  private static final Duration TTL = Duration.ofMinutes(1);
  private static final List<String> NAMES = List.of("a", "b", "c");

  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension();
  private final MutableClock clock = new MutableClock();
  private final CacheSyncHealthCheck check = new CacheSyncHealthCheck();
  private TtlStoreStrategy ttl;
  private ConfigMapManagerComponent manager;

  @BeforeEach
  void start() {
    NAMES.forEach(name -> put(name, "fast"));
    ttl = TtlStoreStrategy.builder(api.client()).clock(clock).defaultTtl(TTL).build();
    manager = new ConfigMapManagerComponent(api.client(), new ManagerMetricsService(), Defaults.configuration());
    manager.addStrategy(ttl, Defaults.strategy("ttl", 1));
    check.addManager(manager);
    manager.registerPod(pod("app", "u1", NAMES));
    NAMES.forEach(name -> manager.getConfigMap("ns", name));
  }

  @AfterEach
  void stop() {
    manager.deactivate();
    ttl.close();
  }

  private void put(String name, String mode) {
    api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName(name)
        .endMetadata().addToData("mode", mode).build()).createOr(existing -> existing.update());
  }

  private static Pod pod(String name, String uid, List<String> configMaps) {
    PodBuilder pod = new PodBuilder().withNewMetadata().withNamespace("ns").withName(name).withUid(uid)
        .endMetadata().withNewSpec().endSpec();
    configMaps.forEach(configMap -> pod.editSpec().addNewVolume().withName(configMap).withNewConfigMap()
        .withName(configMap).endConfigMap().endVolume().endSpec());
    return pod.build();
  }

  private ObjectReceipt receipt(String name) {
    return manager.receipts().stream().flatMap(pod -> pod.objects().stream())
        .filter(object -> object.name().equals(name)).findFirst().orElseThrow();
  }

  @Test
  void aQuietNodeStaysReadyPastTheTimeToLive() {
    assertThat(check.execute().getStatus()).isEqualTo(Result.Status.OK);

    // nobody reads for ten TTLs: every copy expired, and the next get fetches it
    clock.advance(TTL.multipliedBy(10));
    Result quiet = check.execute();
    assertThat(quiet.getStatus()).as(messages(quiet)).isEqualTo(Result.Status.OK);
    assertThat(messages(quiet)).contains("configmaps: 3 objects of 1 pods fresh, 3 of them due for a fetch");
    // the receipts still tell that the copies are not current
    assertThat(manager.receipts().get(0).objects()).allSatisfy(receipt -> {
      assertThat(receipt.staleReason()).hasValueSatisfying(reason -> assertThat(reason).contains("TTL expired"));
      assertThat(receipt.refreshedOnNextGet()).isTrue();
      assertThat(receipt.failing()).isFalse();
    });

    // the next get fetches: a change made meanwhile is served, and its receipt is current again
    put("a", "slow");
    assertThat(manager.getConfigMap("ns", "a").getData()).containsEntry("mode", "slow");
    assertThat(receipt("a").stale()).isFalse();
    assertThat(receipt("a").refreshedOnNextGet()).isFalse();
    assertThat(messages(check.execute())).contains("3 objects of 1 pods fresh, 2 of them due for a fetch");
  }

  @Test
  void aFetchThatFailsStillFailsReadiness() {
    clock.advance(TTL);
    assertThat(check.execute().getStatus()).isEqualTo(Result.Status.OK);

    // the API server is away: the get serves the copy it holds, as the kubelet does, and says its fetch failed
    api.server().stop();
    assertThat(manager.getConfigMap("ns", "b").getData()).containsEntry("mode", "fast");
    Result failing = check.execute();
    assertThat(failing.getStatus()).as(messages(failing)).isEqualTo(Result.Status.TEMPORARILY_UNAVAILABLE);
    assertThat(messages(failing)).contains("configmaps: 1 of 3 objects stale: ns/b: its last fetch failed");
    assertThat(receipt("b").failing()).isTrue();

    // an object never fetched whose first fetch fails
    manager.registerPod(pod("other", "u2", List.of("d")));
    assertThatThrownBy(() -> manager.getConfigMap("ns", "d")).isInstanceOf(KubernetesClientException.class);
    assertThat(messages(check.execute())).contains("2 of 4 objects stale").contains("ns/d: its last fetch failed");

    // the API server is back: the next gets fetch, the node is ready again
    api.server().start();
    put("d", "fast");
    assertThat(manager.getConfigMap("ns", "b").getData()).containsEntry("mode", "fast");
    assertThat(manager.getConfigMap("ns", "d").getData()).containsEntry("mode", "fast");
    Result ready = check.execute();
    assertThat(ready.getStatus()).as(messages(ready)).isEqualTo(Result.Status.OK);
  }

  private static String messages(Result result) {
    StringBuilder text = new StringBuilder();
    result.forEach(entry -> text.append(entry.getMessage()).append('\n'));
    return text.toString();
  }
}
