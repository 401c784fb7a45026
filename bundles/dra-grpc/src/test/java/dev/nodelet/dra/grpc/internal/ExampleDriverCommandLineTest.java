package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command lines of the example drivers, run as the user runs them: {@code --help} prints the usage and exits 0
 * having created nothing; an unknown option is one line naming it, then the usage, and exit status 2.
 */
class ExampleDriverCommandLineTest {

  private static final String KUBELET = "dev.nodelet.examples.kubeletdriver.KubeletDriver";
  private static final String EXTERNAL = "dev.nodelet.examples.externaldriver.ExternalDriver";

  @AutoClose
  private final ExampleProcesses processes = new ExampleProcesses();

  @TempDir
  Path temp;

  /** A run of one driver: its output and errors in one file. */
  private record Run(Process process, Path output, Path registry, Path plugins) {

    int exitStatus() throws InterruptedException {
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the driver exits").isTrue();
      return process.exitValue();
    }

    List<String> lines() throws Exception {
      return Files.readAllLines(output);
    }
  }

  private Run run(String mainClass, String label, String... more) throws Exception {
    Path output = temp.resolve(label + ".out");
    Path registry = temp.resolve(label + "-registry");
    Path plugins = temp.resolve(label + "-plugins");
    String[] args = java.util.stream.Stream.concat(java.util.stream.Stream.of("--registry", registry.toString(),
        "--plugins", plugins.toString()), java.util.Arrays.stream(more)).toArray(String[]::new);
    return new Run(processes.start(ProcessBuilder.Redirect.to(output.toFile()), mainClass, args), output, registry,
        plugins);
  }

  @Test
  void helpPrintsTheUsageAndCreatesNothingAndAnUnknownOptionIsOneLineAndTheUsage() throws Exception {
    // all four at once: each is a JVM start
    Run kubeletHelp = run(KUBELET, "kubelet-help", "--node", "node-a", "--help");
    Run externalHelp = run(EXTERNAL, "external-help", "--devices", "2", "--help");
    Run kubeletWrong = run(KUBELET, "kubelet-wrong", "--node", "node-a", "--devcies", "2");
    Run externalWrong = run(EXTERNAL, "external-wrong", "--attribute", "model");

    assertThat(kubeletHelp.exitStatus()).isZero();
    assertThat(kubeletHelp.lines()).first().asString()
        .startsWith("Usage: java -jar nodelet-example-kubelet-driver.jar --node NAME");
    assertThat(kubeletHelp.lines()).anySatisfy(l -> assertThat(l).contains("--attribute NAME=VALUE"));
    assertThat(externalHelp.exitStatus()).isZero();
    assertThat(externalHelp.lines()).first().asString()
        .startsWith("Usage: java -jar nodelet-example-external-driver.jar");

    assertThat(kubeletWrong.exitStatus()).isEqualTo(2);
    assertThat(kubeletWrong.lines()).first().isEqualTo("kubelet-driver: unknown option --devcies");
    assertThat(kubeletWrong.lines().get(1)).startsWith("Usage: ");
    assertThat(externalWrong.exitStatus()).isEqualTo(2);
    assertThat(externalWrong.lines()).first()
        .isEqualTo("external-driver: --attribute model: expected NAME=VALUE, e.g. model=a100");
    assertThat(externalWrong.lines().get(1)).startsWith("Usage: ");

    for (Run run : List.of(kubeletHelp, externalHelp, kubeletWrong, externalWrong)) {
      assertThat(run.lines()).noneMatch(l -> l.startsWith("\tat ") || l.startsWith("Exception"));
      assertThat(run.registry()).doesNotExist();
      assertThat(run.plugins()).doesNotExist();
    }
  }
}
