package dev.nodelet.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The packaged launcher as a user runs it: {@code java -jar target/nodelet-launcher.jar}. */
class LauncherIT {

  private static final Path JAR = Path.of("target", "nodelet-launcher.jar");
  private static final Path DRIVER_JAR =
      Path.of("..", "examples", "external-driver", "target", "nodelet-example-external-driver.jar");

  @TempDir
  Path dir;

  private static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  private Process launch(String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of(
        java(), "-jar", JAR.toAbsolutePath().toString(),
        "--no-shell", "--etc", dir.resolve("etc").toString(), "--work", dir.resolve("work").toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(output().toFile());
    builder.environment().remove("KUBECONFIG");
    builder.environment().remove("NODE_NAME");
    return builder.start();
  }

  /** The output of a launched process, read from the file it goes to (a pipe may close as the process ends). */
  private Path output() {
    return dir.resolve("output.txt");
  }

  private String awaitLine(String prefix) throws Exception {
    return awaitLine(line -> line.startsWith(prefix), "starting with '" + prefix + "'");
  }

  private String awaitLineContaining(String text) throws Exception {
    return awaitLine(line -> line.contains(text), "containing '" + text + "'");
  }

  private String awaitLine(Predicate<String> wanted, String what) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    List<String> seen = List.of();
    while (System.nanoTime() < deadline) {
      seen = lines();
      for (String line : seen) {
        if (wanted.test(line)) {
          return line;
        }
      }
      Thread.sleep(200);
    }
    throw new AssertionError("no line " + what + " in:\n" + String.join("\n", seen));
  }

  private List<String> lines() throws IOException {
    return Files.exists(output()) ? Files.readAllLines(output(), StandardCharsets.UTF_8) : List.of();
  }

  /** A client of the launcher's embedded API server, through the kubeconfig it writes. */
  private KubernetesClient client() throws IOException {
    return new KubernetesClientBuilder()
        .withConfig(Config.fromKubeconfig(Files.readString(dir.resolve("work").resolve("kubeconfig")))).build();
  }

  private static int devices(KubernetesClient client, String node, String driver) {
    return client.resources(ResourceSlice.class).withField("spec.nodeName", node).withField("spec.driver", driver)
        .list().getItems().stream().mapToInt(s -> s.getSpec().getDevices().size()).sum();
  }

  @Test
  void anExternalDriverRegistersThroughTheLaunchersRegistrationFolder() throws Exception {
    Process process = launch();
    Process driver = null;
    try {
      awaitLine(Main.READY);
      String prefix = "  external DRA drivers register their sockets in ";
      Path registry = Path.of(awaitLine(prefix).substring(prefix.length()));
      driver = new ProcessBuilder(java(), "-jar", DRIVER_JAR.toAbsolutePath().toString(),
          "--registry", registry.toString(), "--plugins", dir.resolve("plugins").toString(),
          "--name", "ext.example.com", "--devices", "3")
          .redirectErrorStream(true).redirectOutput(dir.resolve("driver.txt").toFile()).start();
      awaitLineContaining("Registered DRA driver ext.example.com");
      try (KubernetesClient client = client()) {
        await().atMost(Duration.ofSeconds(60)).until(() -> devices(client, "nodelet-demo", "ext.example.com") == 3);
      }
      assertThat(lines()).noneMatch(line -> line.contains("UnsatisfiedLinkError"));
    } finally {
      if (driver != null) {
        driver.destroyForcibly();
      }
      process.destroyForcibly();
    }
  }

  @Test
  void startsOnTheEmbeddedApiServerAndStopsCleanlyOnSigterm() throws Exception {
    Process process = launch();
    try {
      assertThat(awaitLine("Embedded Kubernetes API server listening on")).contains("http://127.0.0.1:");
      String ready = awaitLine(Main.READY);
      assertThat(ready).contains("node nodelet-demo").contains("(embedded)");
      String bundles = awaitLine("  bundles:");
      assertThat(bundles).contains("KubernetesClient").contains("NodeIdentity").contains("node UID");
      assertThat(awaitLine("  demo:")).contains("2 pods (web, worker)");
      // the pods' references reach the managers through the pod source, and the watch strategy keeps them
      assertThat(awaitLine("  cache: configmaps")).isEqualTo("  cache: configmaps via watch: "
          + "default/web-config (1 pod(s), RUNNING), default/worker-config (1 pod(s), RUNNING)");
      assertThat(awaitLine("  cache: secrets")).isEqualTo("  cache: secrets via watch: "
          + "default/db-credentials (2 pod(s), RUNNING), default/registry-auth (1 pod(s), RUNNING), "
          + "default/web-tls (1 pod(s), RUNNING)");
      assertThat(awaitLine("  dra:")).contains("gpu.example.com published 8 devices in 1 ResourceSlice(s)");
      assertThat(Files.isDirectory(dir.resolve("etc"))).isTrue();

      process.destroy(); // SIGTERM
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("stopped within 30 s").isTrue();
      awaitLine("Nodelet stopped");
      assertThat(process.exitValue()).isZero();
    } finally {
      process.destroyForcibly();
    }
  }

  @Test
  void exitsNonZeroWhenTheApiPortIsTaken() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      Process process = launch("--api-port", String.valueOf(taken.getLocalPort()));
      try {
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).isEqualTo(1);
        assertThat(awaitLine("nodelet: cannot start"))
            .contains(String.valueOf(taken.getLocalPort()));
      } finally {
        process.destroyForcibly();
      }
    }
  }

  @Test
  void rejectsAnUnknownOptionWithUsage() throws Exception {
    Process process = launch("--bogus");
    try {
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isEqualTo(2);
      assertThat(awaitLine("nodelet: ")).isEqualTo("nodelet: unknown option: --bogus");
      awaitLine("usage:");
    } finally {
      process.destroyForcibly();
    }
  }
}
