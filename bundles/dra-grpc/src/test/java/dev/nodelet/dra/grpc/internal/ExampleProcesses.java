package dev.nodelet.dra.grpc.internal;

import java.io.File;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Runs the example drivers of {@code examples/} as child processes ({@code @AutoClose} on a field): every process
 * started is killed at the end of the test.
 */
final class ExampleProcesses implements AutoCloseable {

  private final List<Process> processes = new ArrayList<>();

  /** The registration folder under {@code temp}, private to this user as the kubelet's is. */
  static Path registry(Path temp) throws IOException {
    return Files.createDirectory(temp.resolve("registry"),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
  }

  /** Starts {@code mainClass} with {@code args} in a new JVM, its output and errors to {@code output}. */
  Process start(ProcessBuilder.Redirect output, String mainClass, String... args) throws IOException {
    List<String> command = Stream.concat(Stream.of(Path.of(System.getProperty("java.home"), "bin", "java")
        .toString(), "-cp", classpath(), mainClass), Arrays.stream(args)).toList();
    Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output).start();
    processes.add(process);
    return process;
  }

  /** The test class path without this module's classes, so the child runs only the example and its libraries. */
  private static String classpath() {
    String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    String own = Path.of("target").toAbsolutePath().toString();
    return Arrays.stream(classpath.split(File.pathSeparator))
        .filter(entry -> !Path.of(entry).toAbsolutePath().startsWith(own))
        .collect(Collectors.joining(File.pathSeparator));
  }

  /** Writes a line to the child's standard input. */
  static void send(Process process, String line) throws IOException {
    Writer in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    in.write(line + "\n");
    in.flush();
  }

  @Override
  public void close() throws InterruptedException {
    for (Process process : processes) {
      process.destroyForcibly().waitFor();
    }
  }
}
