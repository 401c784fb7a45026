package dev.nodelet.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The packaged launcher as a user runs it: {@code java -jar target/nodelet-launcher.jar}. */
class LauncherIT {

  private static final Path JAR = Path.of("target", "nodelet-launcher.jar");

  @TempDir
  Path dir;

  private Process launch(String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-jar", JAR.toAbsolutePath().toString(),
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
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    List<String> seen = List.of();
    while (System.nanoTime() < deadline) {
      seen = Files.exists(output()) ? Files.readAllLines(output(), StandardCharsets.UTF_8) : List.of();
      for (String line : seen) {
        if (line.startsWith(prefix)) {
          return line;
        }
      }
      Thread.sleep(200);
    }
    throw new AssertionError("no line starting with '" + prefix + "' in:\n" + String.join("\n"));
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
