package dev.nodelet.managers.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.objectcache.testing.ApiServerExtension;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.time.Duration;
import org.apache.felix.hc.api.Result;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The cache-sync check over a real ConfigMap manager on the watch strategy and the embedded API server. */
class CacheSyncHealthCheckTest {

  private static final Duration WAIT = Duration.ofSeconds(30);

  @RegisterExtension
  final WatchManagerExtension<ConfigMapManagerComponent> manager =
      new WatchManagerExtension<>(ConfigMapManagerComponent::new);
  private final CacheSyncHealthCheck check = new CacheSyncHealthCheck();
  private ApiServerExtension api;
  private ConfigMapManagerComponent component;

  @BeforeEach
  void start() {
    api = manager.api();
    component = manager.component();
    api.client().configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata()
        .withName("settings").endMetadata().addToData("mode", "fast").build()).create();
  }

  @Test
  void passesWhileEveryReferencedObjectIsFreshAndNamesTheStaleOnes() {
    assertThat(check.execute().getStatus()).as("no manager yet").isEqualTo(Result.Status.TEMPORARILY_UNAVAILABLE);
    check.addManager(component);
    component.registerPod(new PodBuilder().withNewMetadata().withNamespace("ns").withName("app").withUid("u1")
        .endMetadata().withNewSpec().addNewVolume().withName("c").withNewConfigMap().withName("settings")
        .endConfigMap().endVolume().endSpec().build());

    Result fresh = await().atMost(WAIT).until(check::execute, r -> r.getStatus() == Result.Status.OK);
    assertThat(messages(fresh)).contains("configmaps: 1 objects of 1 pods fresh (watch strategy)");

    api.server().stop();
    Result stale = await().atMost(WAIT).until(check::execute,
        r -> r.getStatus() == Result.Status.TEMPORARILY_UNAVAILABLE);
    assertThat(messages(stale)).contains("configmaps: 1 of 1 objects stale: ns/settings: its watch is down");

    api.server().start();
    await().atMost(WAIT).until(check::execute, r -> r.getStatus() == Result.Status.OK);
    check.removeManager(component);
    assertThat(check.execute().getStatus()).isEqualTo(Result.Status.TEMPORARILY_UNAVAILABLE);
  }

  private static String messages(Result result) {
    StringBuilder text = new StringBuilder();
    result.forEach(entry -> text.append(entry.getMessage()).append('\n'));
    return text.toString();
  }
}
