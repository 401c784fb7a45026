package dev.nodelet.managers.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.RegisteredPod;
import dev.nodelet.objectcache.testing.ApiServerExtension;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Secret manager component on the watch strategy: a malformed pod never costs a watch or a registration. */
class SecretManagerBadInputTest {

  private static final Duration WAIT = Duration.ofSeconds(30);

  @RegisterExtension
  final WatchManagerExtension<SecretManagerComponent> manager =
      new WatchManagerExtension<>(SecretManagerComponent::new);
  private ApiServerExtension api;
  private SecretManagerComponent component;

  @BeforeEach
  void start() {
    api = manager.api();
    component = manager.component();
    api.client().secrets().inNamespace("ns").resource(new SecretBuilder().withNewMetadata().withName("token")
        .endMetadata().addToData("password", "aHVudGVyMg==").build()).create();
  }

  @Test
  void invalidNamesOpenNoWatchAndTheValidOnesAreServed() {
    component.registerPod(new PodBuilder().withNewMetadata().withNamespace("ns").withName("good").withUid("u1")
        .endMetadata().withNewSpec().addNewImagePullSecret("token").endSpec().build());
    await().atMost(WAIT).until(() -> api.server().openWatches("secrets") == 1);

    Pod bad = new PodBuilder().withNewMetadata().withNamespace("ns").withName("bad").withUid("u2").endMetadata()
        .withNewSpec().addNewImagePullSecret("Bad_Name").addNewImagePullSecret("y".repeat(254))
        .addNewImagePullSecret("token").addNewImagePullSecret("other")
        .endSpec().build();
    component.registerPod(bad);
    Pod elsewhere = new PodBuilder().withNewMetadata().withNamespace("Not_A_Namespace").withName("p").withUid("u3")
        .endMetadata().withNewSpec().addNewImagePullSecret("token").endSpec().build();
    component.registerPod(elsewhere);
    assertThatThrownBy(() -> component.registerPod(new Pod())).isInstanceOf(IllegalArgumentException.class);

    assertThat(component.registeredPods()).containsExactly(
        new RegisteredPod("ns", "good", "u1", List.of("token")),
        new RegisteredPod("ns", "bad", "u2", List.of("token", "other")),
        new RegisteredPod("Not_A_Namespace", "p", "u3", List.of()));
    // token and other; nothing for the invalid names or the invalid namespace
    await().atMost(WAIT).until(() -> api.server().openWatches("secrets") == 2);
    assertThat(component.getSecret("ns", "token").getData()).containsEntry("password", "aHVudGVyMg==");
    assertThatThrownBy(() -> component.getSecret("ns", "Bad_Name")).isInstanceOf(NotRegisteredException.class);

    component.unregisterPod(bad);
    component.unregisterPod(elsewhere);
    await().atMost(WAIT).until(() -> api.server().openWatches("secrets") == 1);
    assertThat(component.getSecret("ns", "token").getData()).containsEntry("password", "aHVudGVyMg==");
  }
}
