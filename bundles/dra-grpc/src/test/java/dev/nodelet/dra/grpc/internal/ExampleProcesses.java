package dev.nodelet.dra.grpc.internal;

import java.io.File;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Collectors;

/** What the tests need to run an example driver of {@code examples/} as a child process. */
final class ExampleProcesses {

  private ExampleProcesses() {
  }

  /** The test class path without this module's classes, so the child runs only the example and its libraries. */
  static String classpath() {
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
}
