package dev.nodelet.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line, in particular {@code --in-cluster} as the DaemonSet of docs/deploy runs the launcher. */
class OptionsTest {

  @TempDir
  Path dir;

  private Options parse(Map<String, String> env, String... args) {
    String[] all = new String[args.length + 4];
    all[0] = "--etc";
    all[1] = dir.resolve("etc").toString();
    all[2] = "--work";
    all[3] = dir.resolve("work").toString();
    System.arraycopy(args, 0, all, 4, args.length);
    return Options.parse(all, env);
  }

  @Test
  void inClusterTakesTheNodeFromNodeName() {
    Options options = parse(Map.of("NODE_NAME", "worker-1"), "--in-cluster");
    assertThat(options.inCluster()).isTrue();
    assertThat(options.kubeconfig()).isNull();
    assertThat(options.nodeName()).isEqualTo("worker-1");
  }

  @Test
  void inClusterRefusesAKubeconfig() throws Exception {
    Path kubeconfig = Files.writeString(dir.resolve("kubeconfig"), "apiVersion: v1\nkind: Config\n");
    assertThatThrownBy(() -> parse(Map.of(), "--in-cluster", "--kubeconfig", kubeconfig.toString()))
        .hasMessageContaining("--in-cluster cannot be used with a kubeconfig");
    assertThatThrownBy(() -> parse(Map.of("KUBECONFIG", kubeconfig.toString()), "--in-cluster"))
        .hasMessageContaining("--in-cluster cannot be used with a kubeconfig");
  }

  @Test
  void metricsAreServedOnlyOnAPortGivenAndOnLoopbackUnlessAnAddressIsGiven() {
    assertThat(parse(Map.of()).metrics()).isEmpty();
    assertThat(parse(Map.of(), "--metrics-port", "9464").metrics())
        .contains(new Options.Metrics(9464, "127.0.0.1"));
    assertThat(parse(Map.of(), "--metrics-port", "0", "--metrics-address", "0.0.0.0").metrics())
        .contains(new Options.Metrics(0, "0.0.0.0"));
    assertThatThrownBy(() -> parse(Map.of(), "--metrics-address", "0.0.0.0"))
        .hasMessageContaining("--metrics-address needs --metrics-port");
    assertThatThrownBy(() -> parse(Map.of(), "--metrics-port", "99999"))
        .hasMessage("--metrics-port must be a port number (0..65535), was 99999");
    assertThatThrownBy(() -> parse(Map.of(), "--metrics-port", "1", "--metrics-address", "no such host.invalid"))
        .hasMessageContaining("--metrics-address must be an IP address");
  }

  @Test
  void withoutEitherTheEmbeddedDemoIsServed() {
    Options options = parse(Map.of());
    assertThat(options.inCluster()).isFalse();
    assertThat(options.kubeconfig()).isNull();
    assertThat(options.nodeName()).isEqualTo("nodelet-demo");
  }

  @Test
  void anInvalidNodeNameIsRefusedWithWhatIsAllowed() {
    assertThatThrownBy(() -> parse(Map.of(), "--node", "Bad_Node"))
        .hasMessageStartingWith("node name Bad_Node is not a valid Kubernetes node name");
    assertThatThrownBy(() -> parse(Map.of("NODE_NAME", "-edge")))
        .hasMessageContaining("(--node or NODE_NAME)");
    assertThat(parse(Map.of(), "--node", "worker-1.example.com").nodeName()).isEqualTo("worker-1.example.com");
  }

  @Test
  void deployAndRunFoldersDefaultToSiblingsOfEtc() {
    Options options = parse(Map.of());
    assertThat(options.deployDir()).isEqualTo(dir.resolve("deploy").toAbsolutePath());
    assertThat(options.runDir()).isEqualTo(dir.resolve("run").toAbsolutePath());
    assertThat(Files.isDirectory(options.prepare().deployDir())).isTrue();
    Options chosen = parse(Map.of(), "--deploy", dir.resolve("d").toString(),
        "--run", dir.resolve("r").toString());
    assertThat(chosen.deployDir()).isEqualTo(dir.resolve("d"));
    assertThat(chosen.runDir()).isEqualTo(dir.resolve("r"));
  }

  @Test
  void shellCanBeForcedWithoutATerminal() {
    assertThat(parse(Map.of(), "--shell").shell()).isTrue();
    assertThat(parse(Map.of(), "--shell", "--no-shell").shell()).isFalse();
  }

  @Test
  void execTakesTheCommandLine() {
    Options options = parse(Map.of(), "--exec", "nodelet:objects");
    assertThat(options.exec()).isEqualTo("nodelet:objects");
    assertThat(options.runDir()).isEqualTo(dir.resolve("run").toAbsolutePath());
  }

  @Test
  void nodeModeIsOffUnlessAsked() {
    assertThat(parse(Map.of()).nodeMode()).isFalse();
    assertThat(parse(Map.of(), "--node-mode").nodeMode()).isTrue();
  }

  @Test
  void parsingCreatesNoFolderAndHelpOrVersionNeedNothingElse() throws Exception {
    Options help = parse(Map.of("KUBECONFIG", dir.resolve("missing").toString()), "--help");
    assertThat(help.help()).isTrue();
    assertThat(parse(Map.of(), "--version").version()).isTrue();
    Options options = parse(Map.of());
    try (var files = Files.list(dir)) {
      assertThat(files).as("nothing created by parsing").isEmpty();
    }
    Options prepared = options.prepare();
    assertThat(dir.resolve("etc")).isDirectory();
    assertThat(dir.resolve("deploy")).isDirectory();
    assertThat(prepared.workDir()).isEqualTo(dir.resolve("work")).isDirectory();
    assertThat(prepared.temporaryWorkDir()).isFalse();
  }

  @Test
  void withoutWorkATemporaryFolderIsMadeOnlyWhenPrepared() throws Exception {
    Options options = Options.parse(new String[] {"--etc", dir.resolve("etc").toString()}, Map.of());
    assertThat(options.workDir()).isNull();
    assertThat(options.temporaryWorkDir()).isTrue();
    Options prepared = options.prepare();
    try {
      assertThat(prepared.workDir()).isDirectory().isNotNull();
      assertThat(prepared.temporaryWorkDir()).isTrue();
    } finally {
      NodeletFramework.deleteRecursively(prepared.workDir().toFile());
    }
  }

  @Test
  void versionNamesNodeletAndJava() {
    assertThat(Options.versionLine()).startsWith("Nodelet ").contains("(Java " + Runtime.version() + ")");
  }

  @Test
  void readyTimeoutTakesSecondsAndZeroForNoLimit() {
    assertThat(parse(Map.of()).readyTimeoutSeconds()).isEqualTo(Options.DEFAULT_READY);
    assertThat(parse(Map.of(), "--ready-timeout", "0").readyTimeoutSeconds()).isZero();
    assertThat(parse(Map.of(), "--ready-timeout", "300").readyTimeoutSeconds()).isEqualTo(300);
    assertThatThrownBy(() -> parse(Map.of(), "--ready-timeout", "-1"))
        .hasMessage("--ready-timeout must be a number of seconds (0 for no limit), was -1");
    assertThatThrownBy(() -> parse(Map.of(), "--ready-timeout", "soon"))
        .hasMessage("--ready-timeout must be a number of seconds (0 for no limit), was soon");
  }
}
