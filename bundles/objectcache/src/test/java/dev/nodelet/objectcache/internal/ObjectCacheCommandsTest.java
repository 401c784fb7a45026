package dev.nodelet.objectcache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.SwitchableObjectManager;
import dev.nodelet.objectcache.testing.MutableClock;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ObjectCacheCommandsTest {

  private static final String PASSWORD = "aHVudGVyMg=="; // "hunter2"

  private EmbeddedApiServer server;
  private KubernetesClient client;
  private SwitchableObjectManager<Secret> secrets;
  private SwitchableObjectManager<ConfigMap> configMaps;
  private final ObjectCacheCommands commands = new ObjectCacheCommands();

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
    client = server.newClient();
    MutableClock clock = new MutableClock();
    secrets = ObjectManager.secrets(client).clock(clock).build();
    configMaps = ObjectManager.configMaps(client).clock(clock).build();
    secrets.useStrategy("recording", new RecordingStrategy("recording", client,
        Collections.synchronizedList(new ArrayList<>())));
    commands.addManager(secrets, Map.of(ObjectManager.PID_PROPERTY, "dev.nodelet.secret"));
    commands.addManager(configMaps, Map.of(ObjectManager.PID_PROPERTY, "dev.nodelet.configmap"));
    client.secrets().inNamespace("ns").resource(new SecretBuilder().withNewMetadata().withName("db")
        .addToAnnotations("kubectl.kubernetes.io/last-applied-configuration", "{\"data\":{\"password\":\""
            + PASSWORD + "\"}}")
        .endMetadata().addToData("password", PASSWORD).build()).create();
    client.configMaps().inNamespace("ns").resource(new ConfigMapBuilder().withNewMetadata().withName("settings")
        .endMetadata().addToData("mode", "fast").build()).create();
    Pod pod = new PodBuilder().withNewMetadata().withNamespace("ns").withName("app").withUid("u1").endMetadata()
        .withNewSpec().addNewVolume().withName("s").withNewSecret().withSecretName("db").endSecret().endVolume()
        .addNewVolume().withName("c").withNewConfigMap().withName("settings").endConfigMap().endVolume()
        .endSpec().build();
    secrets.registerPod(pod);
    configMaps.registerPod(pod);
  }

  @AfterEach
  void stop() {
    secrets.close();
    configMaps.close();
    client.close();
    server.close();
  }

  @Test
  void podsListsEveryRegistrationWithItsReferences() {
    assertThat(commands.pods()).isEqualTo("""
        RESOURCE    NAMESPACE  POD  UID  REFERENCES
        configmaps  ns         app  u1   settings
        secrets     ns         app  u1   db
        """);
  }

  @Test
  void objectsListsStrategyStateReferencesAndLastAccess() {
    secrets.get("ns", "db");
    assertThat(commands.objects()).isEqualTo("""
        RESOURCE    NAMESPACE  NAME      STRATEGY        STATE  REFERENCES  LAST-ACCESS
        configmaps  ns         settings  get (built-in)  -      1           never
        secrets     ns         db        recording       -      1           2026-01-01T00:00:00Z
        """);
  }

  @Test
  void aSecretIsShownRedactedUnlessAsked() {
    String shown = commands.get("secret", "ns", "db");
    assertThat(shown).contains("password: \"<redacted, 7 bytes>\"", "name: \"db\"")
        .doesNotContain(PASSWORD).doesNotContain("hunter2");
    assertThat(commands.get("--show-secret", "secret", "ns", "db")).contains("password: \"" + PASSWORD + "\"");
    assertThat(commands.get("configmap", "ns", "settings")).contains("mode: \"fast\"");
    assertThatThrownBy(() -> commands.get("--all", "secret", "ns", "db"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unknown option --all, the only option is --show-secret");
    assertThatThrownBy(() -> commands.get("secrets", "ns", "other"))
        .isInstanceOf(NotRegisteredException.class).hasMessage("object \"ns\"/\"other\" not registered");
  }

  @Test
  void strategyShowsTheStrategyInUseAndChecksWhatItIsGiven() {
    assertThat(commands.strategy()).isEqualTo("configmaps: get (built-in)\nsecrets: recording\n");
    assertThat(commands.strategy("cm")).isEqualTo("get (built-in)");
    assertThatThrownBy(() -> commands.strategy("pods"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("no manager of pods; available: configmaps, secrets");
    assertThatThrownBy(() -> commands.strategy("secret", "watch)(x=y"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("invalid strategy name watch)(x=y: letters, digits, '.', '_' and '-' only");
    assertThatThrownBy(() -> commands.strategy("secret", "ttl"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("no ConfigurationAdmin service: the strategy of secrets cannot be configured");
  }

  @Test
  void aRemovedManagerIsNoLongerListed() {
    commands.removeManager(secrets, Map.of());
    assertThat(commands.strategy()).isEqualTo("configmaps: get (built-in)\n");
  }
}
