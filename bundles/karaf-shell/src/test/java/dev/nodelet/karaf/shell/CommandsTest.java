package dev.nodelet.karaf.shell;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.objectcache.ResourceType;
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
import java.util.List;
import java.util.Map;
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
        StrategyCommand.class, DriversCommand.class, SlicesCommand.class);
    assertThat(commands).allSatisfy(c -> assertThat(c.getAnnotation(Service.class)).isNotNull());
    assertThat(commands.stream().map(c -> c.getAnnotation(Command.class)))
        .allSatisfy(c -> assertThat(c.scope()).isEqualTo("nodelet"))
        .extracting(Command::name).containsExactly("pods", "objects", "get", "strategy", "drivers", "slices");
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
    assertThat(Stream.<Action>of(new DriversCommand(), new SlicesCommand())).allSatisfy(c ->
        assertThatThrownBy(c::execute).hasMessageContaining("is not running"));
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
