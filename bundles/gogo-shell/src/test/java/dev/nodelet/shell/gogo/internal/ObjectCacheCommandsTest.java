package dev.nodelet.shell.gogo.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.cache.core.ObjectManagers;
import dev.nodelet.objectcache.NotRegisteredException;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.cache.core.SwitchableObjectManager;
import dev.nodelet.objectcache.Watch;
import dev.nodelet.objectcache.WatchOptions;
import dev.nodelet.objectcache.testing.MutableClock;
import dev.nodelet.store.ttl.TtlStoreStrategy;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ObjectCacheCommandsTest {

  static final String POD_USAGE = "usage: nodelet:pods [--receipts]\n       nodelet:pods --bundles [<namespace>]";

  private static final String PASSWORD = "aHVudGVyMg=="; // "hunter2"
  private static final Duration WAIT = Duration.ofSeconds(30); // an upper bound for slow CI machines

  private EmbeddedApiServer server;
  private KubernetesClient client;
  private SwitchableObjectManager<Secret> secrets;
  private SwitchableObjectManager<ConfigMap> configMaps;
  private final ObjectCacheCommands commands = new ObjectCacheCommands();
  private MutableClock clock;

  @BeforeEach
  void start() {
    server = EmbeddedApiServer.builder().build().start();
    client = server.newClient();
    clock = new MutableClock();
    secrets = ObjectManagers.secrets(client).clock(clock).build();
    configMaps = ObjectManagers.configMaps(client).clock(clock).build();
    // any strategy that tracks registrations: a get of an object no pod references fails
    secrets.useStrategy("recording", TtlStoreStrategy.builder(client).clock(clock).build());
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
  void podsWithReceiptsShowTheVersionServedAndWhenItTurnsStale() {
    Secret db = secrets.get("ns", "db");
    String fresh = commands.pods("--receipts");
    assertThat(fresh.lines().findFirst().orElseThrow()).startsWith("NAMESPACE  POD  RESOURCE    NAME      UID");
    String secretLine = fresh.lines().filter(l -> l.contains(" secrets ")).findFirst().orElseThrow();
    assertThat(secretLine).contains("app", "db", db.getMetadata().getUid(), " " + db.getMetadata().getResourceVersion()
        + " ", "2026-01-01T00:00:00Z").endsWith("no");
    // the ConfigMap was never read with the built-in get: no version is claimed
    String configMapLine = fresh.lines().filter(l -> l.contains(" configmaps ")).findFirst().orElseThrow();
    assertThat(configMapLine).contains("settings  -");
    assertThat(fresh).doesNotContain(PASSWORD).doesNotContain("hunter2");

    clock.advance(Duration.ofHours(1));
    assertThat(commands.pods("--receipts").lines().filter(l -> l.contains(" secrets ")).findFirst().orElseThrow())
        .contains("yes: its TTL expired");
    assertThatThrownBy(() -> commands.pods("--all")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("nodelet:pods: unknown option --all, the options are --receipts and --bundles\n" + POD_USAGE);
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
        .hasMessageStartingWith("nodelet:get: unknown option --all, the only option is --show-secret\nusage: nodelet:get");
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
    commands.strategyAdded(7, "watch");
    commands.strategyAdded(8, "get");
    assertThatThrownBy(() -> commands.strategy("secret", "ttl"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("no strategy ttl is installed (installed: get, watch); --force sets it anyway, and the manager "
            + "serves with its built-in get until it is installed");
    assertThatThrownBy(() -> commands.strategy("-f", "secret", "ttl"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("nodelet:strategy: unknown option -f, the only option is --force\nusage: nodelet:strategy");
    assertThatThrownBy(() -> commands.strategy("--force", "secret", "ttl"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("no ConfigurationAdmin service: the strategy of secrets cannot be configured");
    assertThatThrownBy(() -> commands.strategy("secret", "watch"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("no ConfigurationAdmin service: the strategy of secrets cannot be configured");
  }

  @Test
  void watchPrintsTypeNameAndVersionUntilInterrupted() throws InterruptedException {
    secrets.useBuiltInStrategy(); // its gets report what they find
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    Thread command = new Thread(() -> commands.watch("secret", "ns", "db", out));
    command.start();
    await().atMost(WAIT).until(() -> secrets.watchStatistics().watchers() == 1);

    secrets.get("ns", "db");
    await().atMost(WAIT).until(() -> bytes.toString(StandardCharsets.UTF_8).matches("ADDED    ns/db \\d+\n"));

    command.interrupt();
    command.join(WAIT.toMillis());
    assertThat(command.isAlive()).isFalse();
    assertThat(secrets.watchStatistics().watchers()).as("the watch is closed").isZero();
    assertThat(bytes.toString(StandardCharsets.UTF_8)).doesNotContain(PASSWORD).doesNotContain("hunter2");
  }

  @Test
  void watchSaysWhenTheWatchEndsWithoutAnInterrupt() throws InterruptedException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Thread command = new Thread(() -> commands.watch("cm", "ns", null,
        new PrintStream(bytes, true, StandardCharsets.UTF_8)));
    command.start();
    await().atMost(WAIT).until(() -> configMaps.watchStatistics().watchers() == 1);

    configMaps.close();

    command.join(WAIT.toMillis());
    assertThat(command.isAlive()).isFalse();
    assertThat(bytes.toString(StandardCharsets.UTF_8))
        .isEqualTo("the watch ended (the manager stopped, or the output did not keep up)\n");
  }

  @Test
  void watchstatsCountsPerManager() {
    configMaps.get("ns", "settings");
    try (Watch<ConfigMap> watch = configMaps.watch(WatchOptions.<ConfigMap>builder().sendInitialEvents(true)
        .build())) {
      assertThat(commands.watchstats()).isEqualTo("""
          RESOURCE    WATCHERS  TERMINATED  INITIAL-EVENTS  QUEUED  LONGEST-QUEUE
          configmaps  1         0           1               1       1
          secrets     0         0           0               0       0
          """);
    }
  }

  @Test
  void aRemovedManagerIsNoLongerListed() {
    commands.removeManager(secrets, Map.of());
    assertThat(commands.strategy()).isEqualTo("configmaps: get (built-in)\n");
  }
}
