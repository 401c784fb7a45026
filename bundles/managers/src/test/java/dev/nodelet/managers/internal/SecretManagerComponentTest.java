package dev.nodelet.managers.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.RegisteredPod;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchEvent;
import dev.nodelet.objectcache.WatchOptions;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import dev.nodelet.store.ttl.TtlStoreStrategy;
import dev.nodelet.store.watch.WatchStoreStrategy;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class SecretManagerComponentTest {

  @RegisterExtension
  final ApiServerExtension api = new ApiServerExtension();
  private WatchStoreStrategy watch;
  private TtlStoreStrategy ttl;
  private SecretManagerComponent component;

  @BeforeEach
  void start() {
    watch = WatchStoreStrategy.builder(api.client()).build();
    ttl = TtlStoreStrategy.builder(api.client()).build();
    for (String name : List.of("pull", "token")) {
      api.client().secrets().inNamespace("ns").resource(new SecretBuilder().withNewMetadata().withName(name)
          .endMetadata().addToData("password", "aHVudGVyMg==").build()).create();
    }
    component = new SecretManagerComponent(api.client(), new ManagerMetricsService(),
        Defaults.configuration());
  }

  @AfterEach
  void stop() {
    component.deactivate();
    watch.close();
    ttl.close();
  }

  /** A pod with an image pull secret and a secret volume, and a ConfigMap volume the secret manager ignores. */
  private static Pod pod() {
    return new PodBuilder().withNewMetadata().withNamespace("ns").withName("p").withUid("u1").endMetadata()
        .withNewSpec().addNewImagePullSecret("pull")
        .addNewVolume().withName("t").withNewSecret().withSecretName("token").endSecret().endVolume()
        .addNewVolume().withName("c").withNewConfigMap().withName("settings").endConfigMap().endVolume()
        .endSpec().build();
  }

  @Test
  void registersTheSecretNamesOfAPodAndKeepsThemAcrossStrategies() {
    assertThat(Defaults.configuration()
        .strategy_target()).isEqualTo("(nodelet.strategy=watch)");
    component.registerPod(pod());
    assertThat(component.registeredPods())
        .containsExactly(new RegisteredPod("ns", "p", "u1", List.of("pull", "token")));
    assertThat(component.builtInStrategy()).isTrue();
    assertThat(component.strategy()).isEqualTo("get");

    component.addStrategy(watch, Defaults.strategy("watch", 1));
    assertThat(component.getSecret("ns", "token").getData()).containsEntry("password", "aHVudGVyMg==");
    assertThatThrownBy(() -> component.getSecret("ns", "settings"))
        .isInstanceOf(NotRegisteredException.class).hasMessage("object \"ns\"/\"settings\" not registered");

    component.addStrategy(ttl, Defaults.strategy("ttl", 2));
    component.removeStrategy(watch, Defaults.strategy("watch", 1));
    await().atMost(Duration.ofSeconds(30)).until(() -> api.server().openWatches("secrets") == 0);
    assertThat(component.getSecret("ns", "pull").getData()).containsKey("password");

    component.unregisterPod(pod());
    assertThatThrownBy(() -> component.getSecret("ns", "pull"))
        .isInstanceOf(NotRegisteredException.class).hasMessage("object \"ns\"/\"pull\" not registered");
  }

  @Test
  void aWatchSeesTheReferencedSecretsAndEndsOnDeactivation() throws InterruptedException {
    component.addStrategy(watch, Defaults.strategy("watch", 1));
    Watch<Secret> events = component.watch(WatchOptions.<Secret>builder()
        .field(WatchOptions.FIELD_NAME, "token").build());
    component.registerPod(pod());
    WatchEvent<Secret> added = events.poll(Duration.ofSeconds(10));
    assertThat(added).isNotNull();
    assertThat(added.type()).isEqualTo(WatchEvent.Type.ADDED);
    assertThat(added.object().getMetadata().getName()).isEqualTo("token");
    assertThat(added.toString()).doesNotContain("aHVudGVyMg==");

    component.unregisterPod(pod());
    WatchEvent<Secret> deleted = events.poll(Duration.ofSeconds(10));
    assertThat(deleted).isNotNull();
    assertThat(deleted.type()).as("no pod references it any more").isEqualTo(WatchEvent.Type.DELETED);

    component.deactivate();
    assertThat(events.poll(Duration.ofSeconds(10))).isNull();
    assertThat(events.isEnded()).isTrue();
  }

  @Test
  void deactivationStopsEveryWatch() {
    component.addStrategy(watch, Defaults.strategy("watch", 1));
    component.registerPod(pod());
    component.getSecret("ns", "token");
    component.deactivate();
    await().atMost(Duration.ofSeconds(30)).until(() -> api.server().openWatches("secrets") == 0);
    assertThatThrownBy(() -> component.getSecret("ns", "token"))
        .isInstanceOf(IllegalStateException.class).hasMessage("the secrets manager is closed");
  }
}
