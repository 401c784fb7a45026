package dev.nodelet.benchmarks;

import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The embedded API server in a child JVM, so that the heap and threads of the measuring JVM are the client's alone.
 * {@link #main} starts the server, prints its URL and runs until its standard input closes.
 */
final class ApiServerProcess implements AutoCloseable {

  private final Process process;
  private final String url;

  private ApiServerProcess(Process process, String url) {
    this.process = process;
    this.url = url;
  }

  static ApiServerProcess start() {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> command = new ArrayList<>(List.of(java, "-Xmx2g", "-cp", System.getProperty("java.class.path"),
        ApiServerProcess.class.getName()));
    try {
      Process process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8));
      String line;
      while ((line = out.readLine()) != null) {
        if (line.startsWith("URL ")) {
          return new ApiServerProcess(process, line.substring(4).trim());
        }
      }
      process.destroyForcibly();
      throw new IllegalStateException("the API server process ended without a URL");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  String url() {
    return url;
  }

  @Override
  public void close() {
    try {
      process.getOutputStream().close();
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (IOException e) {
      process.destroyForcibly();
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  public static void main(String[] args) throws IOException {
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start()) {
      System.out.println("URL " + server.url());
      System.out.flush();
      while (System.in.read() >= 0) {
        // runs until the parent closes our input
      }
    }
  }
}
