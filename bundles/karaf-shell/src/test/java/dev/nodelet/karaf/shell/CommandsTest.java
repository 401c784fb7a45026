package dev.nodelet.karaf.shell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimStatus;
import dev.nodelet.dra.claims.ContainerDevices;
import dev.nodelet.dra.claims.DeviceHealthInfo;
import dev.nodelet.objectcache.CachedObject;
import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.ObjectState;
import dev.nodelet.objectcache.RegisteredPod;
import dev.nodelet.objectcache.ResourceType;
import dev.nodelet.pods.ContainerInfo;
import dev.nodelet.pods.PodInfo;
import dev.nodelet.shell.views.PodViews;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.reflect.Proxy;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.jar.Manifest;
import java.util.stream.Stream;
import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Service;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The commands as Karaf's shell sees them (annotations, manifest) and what they print. */
class CommandsTest {

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private PrintStream systemOut;

  @BeforeEach
  void captureOut() {
    systemOut = System.out;
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
  }

  @AfterEach
  void restoreOut() {
    System.setOut(systemOut);
  }

  private String printed() {
    return out.toString(StandardCharsets.UTF_8);
  }

  @Test
  void everyCommandIsAKarafServiceInScopeNodelet() {
    List<Class<? extends Action>> commands = List.of(PodsCommand.class, ObjectsCommand.class, GetCommand.class,
        StrategyCommand.class, DriversCommand.class, SlicesCommand.class, ClaimsCommand.class);
    assertThat(commands).allSatisfy(c -> assertThat(c.getAnnotation(Service.class)).isNotNull());
    assertThat(commands.stream().map(c -> c.getAnnotation(Command.class)))
        .allSatisfy(c -> assertThat(c.scope()).isEqualTo("nodelet"))
        .extracting(Command::name).containsExactly("pods", "objects", "get", "strategy", "drivers", "slices", "claims");
  }

  @Test
  void theManifestNamesTheCommandPackages() throws IOException, URISyntaxException {
    // the manifest bnd wrote next to the classes, not the first one on the class path
    Path classes = Path.of(PodsCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    try (InputStream in = Files.newInputStream(classes.resolve("META-INF/MANIFEST.MF"))) {
      assertThat(new Manifest(in).getMainAttributes().getValue("Karaf-Commands")).isEqualTo("*");
    }
  }

  @Test
  void getRedactsSecretDataUnlessAsked() {
    Secret secret = new SecretBuilder().withNewMetadata().withNamespace("ns").withName("creds").endMetadata()
        .withData(Map.of("password", "aHVudGVyMg==")).build();
    GetCommand get = new GetCommand();
    get.managers = List.of(manager(ResourceType.SECRETS, secret));
    get.kind = "secret";
    get.namespace = "ns";
    get.name = "creds";

    get.execute();
    assertThat(printed()).contains("password: \"<redacted, 7 bytes>\"").doesNotContain("aHVudGVyMg==");

    out.reset();
    get.showSecret = true;
    get.execute();
    assertThat(printed()).contains("password: \"aHVudGVyMg==\"");
  }

  /**
   * No command but {@code get --show-secret} prints a value of a Secret's data or stringData, plain or
   * base64, nor the copy of it in kubectl's last-applied annotation (the Gogo commands are covered in Felix by
   * {@code FelixSecretsIT}).
   */
  @Test
  void noCommandPrintsSecretDataUnlessAsked() throws Exception {
    String plain = "pl41n-V4LUE-karaf";
    String fromStringData = "str1ng-D4TA-karaf";
    String encoded = Base64.getEncoder().encodeToString(plain.getBytes(StandardCharsets.UTF_8));
    Secret secret = new SecretBuilder().withNewMetadata().withNamespace("ns").withName("creds")
        .addToAnnotations("kubectl.kubernetes.io/last-applied-configuration",
            "{\"data\":{\"password\":\"" + encoded + "\"},\"stringData\":{\"token\":\"" + fromStringData + "\"}}")
        .endMetadata().addToData("password", encoded).addToStringData("token", fromStringData).build();
    List<ObjectManager<?>> managers = List.of(listingManager(secret));

    PodsCommand pods = new PodsCommand();
    pods.managers = managers;
    ObjectsCommand objects = new ObjectsCommand();
    objects.managers = managers;
    StrategyCommand strategies = new StrategyCommand();
    strategies.managers = managers;
    StrategyCommand strategy = new StrategyCommand();
    strategy.managers = managers;
    strategy.kind = "secrets";
    List<Action> commands = new java.util.ArrayList<>(List.of(pods, objects, strategies, strategy));
    for (String kind : List.of("secret", "secrets")) {
      GetCommand get = new GetCommand();
      get.managers = managers;
      get.kind = kind;
      get.namespace = "ns";
      get.name = "creds";
      commands.add(get);
    }
    for (Action command : commands) {
      command.execute();
    }
    assertThat(printed()).contains("creds", "uid-1", "password: \"<redacted, 17 bytes>\"",
        "token: \"<redacted, 17 bytes>\"", "last-applied-configuration: \"<redacted>\"")
        .doesNotContain(plain, encoded, fromStringData,
            Base64.getEncoder().encodeToString(fromStringData.getBytes(StandardCharsets.UTF_8)));

    out.reset();
    GetCommand shown = new GetCommand();
    shown.managers = managers;
    shown.kind = "secret";
    shown.namespace = "ns";
    shown.name = "creds";
    shown.showSecret = true;
    shown.execute();
    assertThat(printed()).contains(encoded, fromStringData);
  }

  @Test
  void anUnknownKindNamesTheAvailableOnes() {
    GetCommand get = new GetCommand();
    get.managers = List.of(manager(ResourceType.SECRETS, null));
    get.kind = "pods";
    get.namespace = "ns";
    get.name = "x";
    assertThatThrownBy(get::execute).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("no manager of pods; available: secrets");
  }

  @Test
  void driversAndSlicesSayWhenTheControllerIsNotRunning() {
    assertThat(Stream.<Action>of(new DriversCommand(), new SlicesCommand(), new ClaimsCommand())).allSatisfy(c ->
        assertThatThrownBy(c::execute).hasMessageContaining("is not running"));
  }

  /** A claim manager's answers as plain values. */
  private record Status(List<ClaimInfo> claims, List<ContainerDevices> containers, List<DeviceHealthInfo> health,
      Optional<String> checkpointProblem) implements ClaimStatus {
  }

  @Test
  void claimsShowsPerContainerEntryItsCdiIdsOrWhyItHasNone() {
    ClaimsCommand claims = new ClaimsCommand();
    claims.status = new Status(
        List.of(new ClaimInfo("default", "claim-a", "uid-a", ClaimInfo.State.PREPARING, List.of("default/pod-1"),
            Map.of(), null, null)),
        List.of(new ContainerDevices("default", "pod-1", "main", "gpu", null, List.of(),
            "ResourceClaim default/claim-a is not prepared (PREPARING)"),
            new ContainerDevices("default", "pod-2", "main", "gpu", null, List.of(),
                "ResourceClaim not created yet for entry gpu of pod pod-2"),
            new ContainerDevices("default", "pod-3", "main", "gpu", null, List.of("k8s.gpu.example.com/gpu=gpu-0"))),
        List.of(new DeviceHealthInfo("gpu.example.com", "pool", "gpu-0", DeviceHealth.Health.HEALTHY, "",
            Instant.EPOCH)),
        Optional.empty());
    claims.execute();
    assertThat(printed()).isEqualTo("default/claim-a  PREPARING  uid=uid-a  pods=default/pod-1\n"
        + "container default/pod-1/main  claim=gpu  cdi=-\n"
        + "  error: ResourceClaim default/claim-a is not prepared (PREPARING)\n"
        + "container default/pod-2/main  claim=gpu  cdi=-\n"
        + "  error: ResourceClaim not created yet for entry gpu of pod pod-2\n"
        + "container default/pod-3/main  claim=gpu  cdi=k8s.gpu.example.com/gpu=gpu-0\n"
        + "health gpu.example.com/pool/gpu-0  HEALTHY\n");
  }

  @Test
  void podsWithBundlesListsThePodsRunAsBundlesFilteredByNamespace() {
    PodsCommand pods = new PodsCommand();
    pods.bundles = true;
    pods.execute();
    assertThat(printed()).isEqualTo(PodViews.OFF);

    out.reset();
    pods.podsStatus = () -> List.of(
        new PodInfo("default", "web", "uid-1", "Running", "", List.of(new ContainerInfo("app",
            "mvn:org.example/app/1.0.0", ContainerInfo.State.TERMINATED, "Completed", "", Instant.EPOCH,
            Instant.EPOCH, 0, 2, false, "org.example.app",
            Optional.of(new ContainerInfo.BundleInfo(42, "org.example.app", "1.0.0", "RESOLVED"))))),
        new PodInfo("edge", "gw", "uid-2", "Pending", "", List.of()));
    pods.execute();
    assertThat(printed()).startsWith("default/web  Running  uid=uid-1\n  app  terminated Completed exit=0 at "
        + "1970-01-01T00:00:00Z  restarts=2  ready=false  image=mvn:org.example/app/1.0.0"
        + "  bundle=42 org.example.app 1.0.0 RESOLVED  pid=org.example.app\n").contains("edge/gw  Pending");

    out.reset();
    pods.namespace = "edge";
    pods.execute();
    assertThat(printed()).isEqualTo("edge/gw  Pending  uid=uid-2\n");
  }

  @Test
  void podsSaysWhichArgumentsGoTogether() {
    PodsCommand pods = new PodsCommand();
    pods.namespace = "edge";
    assertThatThrownBy(pods::execute).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("nodelet:pods: a namespace goes only with --bundles, was given edge\n" + PodsCommand.USAGE);
    pods.bundles = true;
    pods.receipts = true;
    assertThatThrownBy(pods::execute).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("nodelet:pods: --receipts and --bundles exclude each other\nusage: nodelet:pods");
  }

  /** A Secret manager with one pod that references one Secret, which it serves. */
  @SuppressWarnings("unchecked")
  private static ObjectManager<Secret> listingManager(Secret secret) {
    String name = secret.getMetadata().getName();
    return (ObjectManager<Secret>) Proxy.newProxyInstance(CommandsTest.class.getClassLoader(),
        new Class<?>[] {ObjectManager.class}, (proxy, method, args) -> switch (method.getName()) {
          case "type" -> ResourceType.SECRETS;
          case "get" -> secret;
          case "strategy" -> "watch";
          case "builtInStrategy" -> false;
          case "registeredPods" -> List.of(new RegisteredPod("ns", "pod", "uid-1", List.of(name)));
          case "objects" -> List.of(new CachedObject("ns", name, "watch", Optional.of(ObjectState.RUNNING), 1,
              Optional.of(Instant.EPOCH)));
          case "toString" -> "secret manager";
          default -> throw new UnsupportedOperationException(method.getName());
        });
  }

  /** A manager that serves one object; every other method fails. */
  @SuppressWarnings("unchecked")
  private static <T extends HasMetadata> ObjectManager<T> manager(ResourceType<T> type, T object) {
    return (ObjectManager<T>) Proxy.newProxyInstance(CommandsTest.class.getClassLoader(),
        new Class<?>[] {ObjectManager.class}, (proxy, method, args) -> switch (method.getName()) {
          case "type" -> type;
          case "get" -> object;
          case "toString" -> "manager of " + type.plural();
          default -> throw new UnsupportedOperationException(method.getName());
        });
  }
}
