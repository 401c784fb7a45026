package dev.nodelet.launcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.nodelet.launcher.demo.DemoCluster;
import dev.nodelet.testing.apiserver.EmbeddedApiServer;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
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

  /**
   * The build's options for the JVMs a test starts (the client compiler only: a launcher lives seconds, and its
   * start is most of its CPU time), none when run without them.
   */
  private static List<String> testJvmOptions() {
    String options = System.getProperty("nodelet.test.jvm.options", "").trim();
    return options.isEmpty() ? List.of() : List.of(options.split("\\s+"));
  }

  /** A process of this JVM's {@code java} with the test JVM options and {@code args}. */
  private static ProcessBuilder java(String... args) {
    List<String> command = new ArrayList<>(List.of(java()));
    command.addAll(testJvmOptions());
    command.addAll(List.of(args));
    return new ProcessBuilder(command);
  }

  private Process launch(String... args) throws IOException {
    return launchWith(List.of(), output(), args);
  }

  /** A launcher with these JVM options, whose output goes to {@code output}. */
  private Process launchWith(List<String> jvmOptions, Path output, String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of(java()));
    command.addAll(testJvmOptions());
    command.addAll(jvmOptions);
    command.addAll(List.of("-jar", JAR.toAbsolutePath().toString(),
        "--no-shell", "--etc", dir.resolve("etc").toString(), "--work", dir.resolve("work").toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(output.toFile());
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

  /** The exit status and output of {@code --exec COMMAND} against the launcher of {@code dir}. */
  private static Exec exec(Path dir, String command) throws Exception {
    Process exec = java("-jar", JAR.toAbsolutePath().toString(),
        "--etc", dir.resolve("etc").toString(), "--exec", command).redirectErrorStream(true).start();
    String output = new String(exec.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    return new Exec(exec.waitFor(), output);
  }

  private record Exec(int status, String output) {
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
      driver = startExternalDriverWithThreeDevices();
      assertThat(lines()).noneMatch(line -> line.contains("UnsatisfiedLinkError"));
    } finally {
      if (driver != null) {
        driver.destroyForcibly();
      }
      process.destroyForcibly();
    }
  }

  /** Starts the example external driver on the launcher's registration folder and waits for its slices. */
  private Process startExternalDriverWithThreeDevices() throws Exception {
    String prefix = "  external DRA drivers register their sockets in ";
    Path registry = Path.of(awaitLine(prefix).substring(prefix.length()));
    Process driver = java("-jar", DRIVER_JAR.toAbsolutePath().toString(),
        "--registry", registry.toString(), "--plugins", dir.resolve("plugins").toString(),
        "--name", "ext.example.com", "--devices", "3")
        .redirectErrorStream(true).redirectOutput(dir.resolve("driver.txt").toFile()).start();
    try {
      awaitLineContaining("Registered DRA driver ext.example.com");
      try (KubernetesClient client = client()) {
        await().atMost(Duration.ofSeconds(60)).until(() -> devices(client, "nodelet-demo", "ext.example.com") == 3);
      }
      return driver;
    } catch (Exception | AssertionError e) {
      driver.destroyForcibly();
      throw e;
    }
  }

  @Test
  void startsOnTheEmbeddedApiServerAndStopsCleanlyOnSigterm() throws Exception {
    Process process = launch();
    try {
      assertThat(awaitLine("Embedded Kubernetes API server listening on")).contains("https://127.0.0.1:");
      String ready = awaitLine(Main.READY);
      assertThat(ready).contains("node nodelet-demo on https://127.0.0.1:").contains("(embedded)");
      // the default transport, over TLS: HTTP/2 through Jetty's pooled client
      awaitLine(line -> line.contains("Kubernetes client") && line.contains("for https://127.0.0.1:")
          && line.contains(": HTTP/2 over Jetty's client"), "naming the client's transport");
      // the kubeconfig Nodelet itself reads: the server's CA, never an insecure skip of verification
      Path kubeconfig = dir.resolve("work").resolve("kubeconfig");
      assertThat(Files.readString(kubeconfig)).contains("server: https://127.0.0.1:", "certificate-authority-data: ")
          .doesNotContain("insecure");
      assertThat(Files.getPosixFilePermissions(kubeconfig)).containsExactlyInAnyOrder(
          PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
      String bundles = awaitLine("  bundles:");
      assertThat(bundles).contains("KubernetesClient").contains("NodeIdentity").contains("node UID");
      assertThat(awaitLine("  demo:")).contains("2 pods (web, worker)");
      // the pods' references reach the managers through the pod source, and the watch strategy keeps them
      // worker-config is immutable: once the demo's pods runtime has read it (for the worker pod), its copy is kept
      // without a watch
      assertThat(awaitLine("  cache: configmaps")).matches("  cache: configmaps via watch: "
          + "default/web-config \\(1 pod\\(s\\), RUNNING\\), default/worker-config \\(1 pod\\(s\\), "
          + "(RUNNING|IMMUTABLE)\\)");
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

  private static String scrape(int port, String accept) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"));
    if (accept != null) {
      request.header("Accept", accept);
    }
    HttpResponse<String> response = HttpClient.newHttpClient().send(request.build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    return response.body();
  }

  private static double value(String scrape, String series) {
    Matcher matcher = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(scrape);
    return matcher.find() ? Double.parseDouble(matcher.group(1)) : Double.NaN;
  }

  @Test
  void servesMetricsOfEveryBundleOnTheMetricsPortWithoutSecrets() throws Exception {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Process process = launch("--metrics-port", String.valueOf(port));
    try {
      awaitLine(Main.READY);
      assertThat(awaitLine("  metrics:")).isEqualTo("  metrics: http://127.0.0.1:" + port + "/metrics");
      awaitLine("  dra:");
      String text = scrape(port, null);
      assertThat(value(text, "nodelet_manager_registered_pods{resource=\"secrets\"}")).isEqualTo(2);
      assertThat(value(text, "nodelet_manager_objects{resource=\"secrets\",state=\"running\",strategy=\"watch\"}"))
          .isEqualTo(3);
      // two ConfigMaps referenced; the immutable one's watch ends once it has been read (the demo's pods read it)
      double immutable = value(text,
          "nodelet_manager_objects{resource=\"configmaps\",state=\"immutable\",strategy=\"watch\"}");
      assertThat(value(text, "nodelet_store_watch_open_watches{resource=\"configmaps\"}"))
          .isEqualTo(2 - (Double.isNaN(immutable) ? 0 : immutable));
      assertThat(value(text, "nodelet_dra_devices{driver=\"gpu.example.com\"}")).isEqualTo(8);
      assertThat(value(text, "nodelet_example_driver_devices{driver=\"gpu.example.com\"}")).isEqualTo(8);
      assertThat(value(text, "nodelet_dra_slice_writes_total{verb=\"create\"}")).isEqualTo(1);
      assertThat(text).contains("rest_client_requests_total{code=\"200\"", "nodelet_apiserver_requests_total{",
          "nodelet_manager_get_duration_seconds_bucket{", "nodelet_store_watch_syncs_total{",
          "nodelet_dra_claims{state=\"prepared\"}",
          "nodelet_dra_sync_duration_seconds_count", "nodelet_dra_drivers{state=\"monitoring\"} 1.0");
      // object names, keys and values of Secrets never reach the metrics
      assertThat(text).doesNotContain("db-credentials").doesNotContain("registry-auth").doesNotContain("web-tls")
          .doesNotContain("password");
      assertThat(scrape(port, "application/openmetrics-text; version=1.0.0")).endsWith("# EOF\n");
      // the standard process and JVM families
      assertThat(text).contains("process_cpu_seconds_total ", "process_resident_memory_bytes ", "process_open_fds ",
          "jvm_threads_current ", "jvm_memory_used_bytes{area=\"heap\"} ", "jvm_gc_collection_seconds_count{");

      // a change on the server moves the propagation histogram of the watch store
      String series = "nodelet_store_watch_propagation_delay_seconds_count{resource=\"configmaps\"}";
      double before = value(scrape(port, null), series);
      try (KubernetesClient client = client()) {
        client.configMaps().inNamespace("default").withName("web-config")
            .edit(c -> new io.fabric8.kubernetes.api.model.ConfigMapBuilder(c).addToData("changed", "yes").build());
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> value(scrape(port, null), series) > before);
    } finally {
      process.destroyForcibly();
    }
  }

  @Test
  void healthPortServesProbesAndReceiptsAndLogsAreJsonWithLevelsChangedAtRuntime() throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = free.getLocalPort();
    }
    Process process = launch("--health-port", Integer.toString(port), "--log-format", "json");
    try {
      // the launcher's own lines are JSON too
      awaitLineContaining("\"msg\":\"" + Main.READY);
      String health = "http://127.0.0.1:" + port;
      assertThat(awaitLineContaining("\"msg\":\"  health:")).contains(health + "/readyz?verbose");
      HttpClient http = HttpClient.newHttpClient();
      // "Nodelet ready" waits for the demo pods (nodelet-pods-listed) and their objects (nodelet-cache-sync): both
      // pods are registered with their 3 objects each, all fresh, when it prints
      ObjectMapper json = new ObjectMapper();
      assertThat(freshPods(json, http.send(HttpRequest.newBuilder(URI.create(health + "/receipts")).build(),
          HttpResponse.BodyHandlers.ofString()).body())).isEqualTo(Map.of("web", 3, "worker", 3));
      // the endpoint's checks' results come from the executor's cache (up to 2 s)
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
        HttpResponse<String> ready = http.send(HttpRequest.newBuilder(URI.create(health + "/readyz")).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(ready.statusCode()).as("/readyz answered: %s", ready.body()).isEqualTo(200);
        assertThat(ready.body()).isEqualTo("ok\n");
      });
      assertThat(http.send(HttpRequest.newBuilder(URI.create(health + "/readyz?verbose")).build(),
          HttpResponse.BodyHandlers.ofString()).body()).contains("[+]nodelet-apiserver ok", "[+]nodelet-node ok",
          "[+]nodelet-cache-sync ok", "[+]nodelet-dra-publishing ok", "[+]nodelet-pods-listed ok",
          "readyz check passed");
      assertThat(http.send(HttpRequest.newBuilder(URI.create(health + "/livez")).build(),
          HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
      String receipts;
      try (KubernetesClient client = client()) {
        String version = client.configMaps().inNamespace("default").withName("web-config").get().getMetadata()
            .getResourceVersion();
        receipts = await().atMost(Duration.ofSeconds(30)).until(() -> http.send(HttpRequest.newBuilder(
            URI.create(health + "/receipts?pod=web")).build(), HttpResponse.BodyHandlers.ofString()).body(),
            body -> body.contains("\"resourceVersion\" : \"" + version + "\""));
      }
      assertThat(receipts).contains("\"name\" : \"web-config\"", "\"name\" : \"db-credentials\"")
          .doesNotContain("demo-placeholder").doesNotContain("ZGVtby1wbGFjZWhvbGRlcg");

      // the level of a package changes at runtime: the root at DEBUG through the logging PID's file in etc/
      Files.writeString(dir.resolve("etc").resolve("org.ops4j.pax.logging.cfg"),
          "log4j2.rootLogger.level = DEBUG\n");
      await().atMost(Duration.ofSeconds(30)).until(() -> lines().stream()
          .anyMatch(line -> line.startsWith("{") && line.contains("\"level\":\"DEBUG\"")));
      List<String> logLines = lines();
      assertThat(logLines).hasSizeGreaterThan(10);
      for (String line : logLines) {
        assertThat(line).as("every line is JSON").startsWith("{");
        JsonNode entry = json.readTree(line);
        assertThat(entry.has("time") && entry.has("level") && entry.has("logger") && entry.has("msg"))
            .as(line).isTrue();
      }
      // no line in the text format, and no secret value at any level
      assertThat(lines()).noneMatch(line -> line.matches("^\\[[^]]+\\] (TRACE|DEBUG|INFO|WARN|ERROR) .*"));
      assertThat(lines()).noneMatch(line -> line.contains("demo-placeholder")
          || line.contains("ZGVtby1wbGFjZWhvbGRlcg"));
    } finally {
      process.destroyForcibly();
    }
  }

  /** The pods of a /receipts answer whose objects are all fresh, with how many objects each references. */
  private static Map<String, Integer> freshPods(ObjectMapper json, String receipts) throws IOException {
    Map<String, Integer> fresh = new TreeMap<>();
    for (JsonNode pod : json.readTree(receipts).path("pods")) {
      if (!pod.path("stale").asBoolean(true)) {
        fresh.put(pod.path("name").asText(), pod.path("objects").size());
      }
    }
    return fresh;
  }

  @Test
  void ctrlCDuringAWatchEndsTheWatchOnly() throws Exception {
    Process process = launch("--shell");
    try (PrintStream shell = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8)) {
      awaitLine(Main.READY);
      shell.println("nodelet:get secret default web-tls");
      shell.println("nodelet:watch secret");
      awaitLineContaining("ADDED    default/web-tls");
      Process interrupt = new ProcessBuilder("kill", "-INT", String.valueOf(process.pid())).start();
      assertThat(interrupt.waitFor()).isZero();
      shell.println("nodelet:objects");
      // the shell still answers: the watch ended, Nodelet did not
      String row = awaitLine(line -> line.startsWith("secrets") && line.contains("web-tls"), "of web-tls");
      assertThat(row).contains("watch").doesNotContain("never");
      assertThat(process.isAlive()).isTrue();
      assertThat(lines()).noneMatch(line -> line.contains("Nodelet stopped"));
    } finally {
      process.destroyForcibly();
    }
  }

  @Test
  void execRunsAShellCommandThroughTheLocalSocket() throws Exception {
    Process process = launch();
    try {
      awaitLine("  cache: secrets"); // the managers hold the demo's objects
      Path socket = dir.resolve("run").resolve("nodelet.sock");
      assertThat(Files.getPosixFilePermissions(socket)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
      Process exec = java("-jar", JAR.toAbsolutePath().toString(),
          "--etc", dir.resolve("etc").toString(), "--exec", "nodelet:objects").redirectErrorStream(true).start();
      String output = new String(exec.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(exec.waitFor()).isZero();
      assertThat(output).contains("LAST-ACCESS").contains("db-credentials");

      Process failing = java("-jar", JAR.toAbsolutePath().toString(),
          "--run", dir.resolve("run").toString(), "--exec", "nodelet:get secret default nothing-here")
          .redirectErrorStream(true).start();
      String error = new String(failing.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(failing.waitFor()).isEqualTo(1);
      assertThat(error).contains("nothing-here");

      Process wrong = java("-jar", JAR.toAbsolutePath().toString(),
          "--run", dir.resolve("run").toString(), "--exec", "nodelet:get Token").redirectErrorStream(true).start();
      String usage = new String(wrong.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(wrong.waitFor()).isEqualTo(1);
      assertThat(usage).contains("nodelet:get: wrong arguments: Token\n"
          + "usage: nodelet:get [--show-secret] <configmap|secret> <namespace> <name>").doesNotContain("coerce");

      // a second launcher on the same work folder is refused before it starts an API server or writes a kubeconfig
      Path kubeconfig = dir.resolve("work").resolve("kubeconfig");
      byte[] before = Files.readAllBytes(kubeconfig);
      Path secondOutput = dir.resolve("second.txt");
      Process second = launchWith(List.of(), secondOutput);
      assertThat(second.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(second.exitValue()).isEqualTo(1);
      assertThat(Files.readString(secondOutput)).contains("nodelet: cannot start: another Nodelet (PID "
          + process.pid() + ") already uses the work folder " + dir.resolve("work").toAbsolutePath())
          .doesNotContain("Embedded Kubernetes API server listening");
      assertThat(Files.readAllBytes(kubeconfig)).isEqualTo(before);
      // the first one still serves, kubectl's way (its kubeconfig) and through the command channel
      try (KubernetesClient client = client()) {
        assertThat(client.configMaps().inNamespace("default").withName("web-config").get()).isNotNull();
      }
      assertThat(exec(dir, "nodelet:objects").status()).isZero();
    } finally {
      process.destroyForcibly();
    }
  }

  /** The names of the process's live threads ({@code /proc/PID/task/*}{@code /comm}, at most 15 characters). */
  private static List<String> threadNames(Process process) throws IOException {
    List<String> names = new ArrayList<>();
    try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(process.pid()), "task"))) {
      for (Path task : tasks.toList()) {
        try {
          names.add(Files.readString(task.resolve("comm"), StandardCharsets.UTF_8).trim());
        } catch (IOException e) {
          // the thread ended while listed
        }
      }
    }
    return names;
  }

  @Test
  void withoutAShellNoIdleShellResolverOrFolderWatchThreadsRunAndCommandsStillDo() throws Exception {
    Process process = launch();
    try {
      awaitLine(Main.READY); // the Gogo shell's bundle, not started, does not hold readiness
      // the Gogo shell's executor, Felix's resolver pool, the JDK's folder watch threads of FileInstall, a stop
      // thread waiting for a signal
      assertThat(threadNames(process)).doesNotContain("Gogo shell", "FileSystemWatchService", "FelixResolver-1",
          "nodelet-stop");
      Exec bundles = exec(dir, "lb");
      assertThat(bundles.status()).isZero();
      assertThat(bundles.output()).containsPattern("(Installed|Resolved) .*Apache Felix Gogo Shell");
      assertThat(exec(dir, "nodelet:objects").status()).isZero();

      process.destroy(); // SIGTERM still stops it, on a thread started then
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("stopped within 30 s").isTrue();
      awaitLine("Nodelet stopped");
      assertThat(process.exitValue()).isZero();
    } finally {
      process.destroyForcibly();
    }
  }

  @Test
  void aDriverJarDroppedIntoDeployStartsAndStopsWhenRemoved() throws Exception {
    Process process = launch();
    try {
      awaitLine(Main.READY);
      Path jar = dir.resolve("deploy").resolve("deployed-driver.jar");
      writeDeployableDriver(jar);
      awaitLineContaining("Published DRA driver deployed.example.com");
      try (KubernetesClient client = client()) {
        await().atMost(Duration.ofSeconds(30))
            .until(() -> devices(client, "nodelet-demo", "deployed.example.com") == 4);
      }
      Files.delete(jar);
      awaitLineContaining("DRA driver deployed.example.com went away");

      // a copy of a built-in bundle replaces it (FileInstall updates the bundle of that name): said once; its
      // removal uninstalls it, and the built-in one comes back with the demo driver
      Path builtIn;
      try (Stream<Path> bundles = Files.list(Path.of("target", "bundles"))) {
        builtIn = bundles.filter(p -> p.getFileName().toString().startsWith("nodelet-driver-example-")).findFirst()
            .orElseThrow();
      }
      Path copy = dir.resolve("deploy").resolve(builtIn.getFileName());
      Files.copy(builtIn, dir.resolve("deploy").resolve(".copy.tmp"));
      Files.move(dir.resolve("deploy").resolve(".copy.tmp"), copy, StandardCopyOption.ATOMIC_MOVE);
      assertThat(awaitLine("nodelet: WARN " + copy.toAbsolutePath())).contains(
          "replaces the built-in bundle nodelet-driver-example", "brings the built-in one back");
      Files.delete(copy);
      awaitLine("nodelet: the built-in bundle nodelet-driver-example is back");
      await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(exec(dir, "nodelet:drivers").output())
          .containsPattern("gpu\\.example\\.com +MONITORING"));
      try (KubernetesClient client = client()) {
        assertThat(devices(client, "nodelet-demo", "gpu.example.com")).isEqualTo(8);
      }
    } finally {
      process.destroyForcibly();
    }
  }

  /**
   * A driver bundle of its own: the example driver's jar under another symbolic name, whose component activates
   * without configuration as driver deployed.example.com.
   */
  private static void writeDeployableDriver(Path target) throws IOException {
    Path source;
    try (Stream<Path> bundles = Files.list(Path.of("target", "bundles"))) {
      source = bundles.filter(p -> p.getFileName().toString().startsWith("nodelet-driver-example-")).findFirst()
          .orElseThrow();
    }
    Path temporary = target.resolveSibling(".deployed-driver.tmp");
    try (JarFile in = new JarFile(source.toFile());
        JarOutputStream out = new JarOutputStream(Files.newOutputStream(temporary))) {
      Manifest manifest = in.getManifest();
      manifest.getMainAttributes().putValue("Bundle-SymbolicName", "deployed-example-driver");
      out.putNextEntry(new JarEntry(JarFile.MANIFEST_NAME));
      manifest.write(out);
      for (JarEntry entry : Collections.list(in.entries())) {
        if (entry.getName().equals(JarFile.MANIFEST_NAME)) {
          continue;
        }
        byte[] content = in.getInputStream(entry).readAllBytes();
        if (entry.getName().equals("OSGI-INF/dev.nodelet.driver.example.internal.ExampleDriver.xml")) {
          content = new String(content, StandardCharsets.UTF_8)
              .replace("configuration-policy=\"require\"", "configuration-policy=\"optional\"")
              .replace("configuration-pid=\"dev.nodelet.driver.example\"",
                  "configuration-pid=\"dev.nodelet.driver.deployed\"")
              .replace("value=\"example.nodelet.dev\"", "value=\"deployed.example.com\"")
              .getBytes(StandardCharsets.UTF_8);
        }
        out.putNextEntry(new JarEntry(entry.getName()));
        out.write(content);
      }
    }
    // FileInstall must not see a half-written jar
    Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE);
  }

  /** A shared folder given to --run is refused, not made private: chmod of /tmp would lock other users out. */
  @Test
  void aRunFolderOpenToOtherUsersIsRefusedAndLeftAsItWas() throws Exception {
    Path shared = Files.createDirectories(dir.resolve("shared"));
    Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxr-xr-x"));
    Process process = launch("--run", shared.toString());
    try {
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isEqualTo(1);
      assertThat(awaitLine("nodelet: cannot start")).contains(shared.toString()).contains("open to other users")
          .contains("mode 0700");
      assertThat(lines()).as("refused before anything starts")
          .noneMatch(line -> line.startsWith("Embedded Kubernetes API server listening"));
      assertThat(Files.getPosixFilePermissions(shared)).isEqualTo(PosixFilePermissions.fromString("rwxr-xr-x"));
    } finally {
      process.destroyForcibly();
    }
  }

  @Test
  void anInvalidNodeNameExitsWithStatusTwoAndNamesIt() throws Exception {
    Process process = launch("--node", "Bad_Node");
    try {
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isEqualTo(2);
      assertThat(awaitLine("nodelet: ")).contains("Bad_Node").contains("not a valid Kubernetes node name");
    } finally {
      process.destroyForcibly();
    }
  }

  @Test
  void aMisspeltKeyIsWarnedAboutOnceAndConfigzShowsTheEffectiveConfigurationWithoutSecrets() throws Exception {
    Files.createDirectories(dir.resolve("etc"));
    Files.writeString(dir.resolve("etc").resolve("dev.nodelet.store.watch.cfg"), "resync.intervall.seconds=5\n");
    Files.writeString(dir.resolve("etc").resolve("dev.nodelet.configmap.cfg"),
        "strategy.targt=(nodelet.strategy=ttl)\nexample.token=s3cr3t-value\n");
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Process process = launch("--metrics-port", String.valueOf(port));
    try {
      awaitLine(Main.READY);
      assertThat(awaitLineContaining("unknown key resync.intervall.seconds")).endsWith("Configuration "
          + "dev.nodelet.store.watch: unknown key resync.intervall.seconds is ignored; did you mean "
          + "resync.interval.seconds? (etc/dev.nodelet.store.watch.cfg)");
      assertThat(awaitLineContaining("unknown key strategy.targt")).endsWith("did you mean strategy.target? "
          + "(etc/dev.nodelet.configmap.cfg)");
      HttpResponse<String> configz = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + port + "/configz")).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(configz.statusCode()).isEqualTo(200);
      assertThat(configz.body()).contains("\"dev.nodelet.store.watch\": {", "\"resync.interval.seconds\": 60",
          "\"unknownKeys\": [\"resync.intervall.seconds\"]", "\"node.name\": \"nodelet-demo\"",
          "\"unknownKeys\": [\"example.token\", \"strategy.targt\"]").doesNotContain("s3cr3t-value");
      assertThat(lines()).noneMatch(line -> line.contains("s3cr3t-value"))
          .filteredOn(line -> line.contains("unknown key")).hasSize(3);
    } finally {
      process.destroyForcibly();
    }
  }

  @Test
  void aFileInEtcOverridesSingleKeysOfTheLaunchersConfiguration() throws Exception {
    Process process = launch();
    try {
      awaitLine(Main.READY);
      Path file = dir.resolve("etc").resolve("dev.nodelet.kube.cfg");
      Files.writeString(file, "request.timeout=12345\nexample.token=s3cr3t-value\n");
      String effective = awaitLine(line -> line.startsWith("nodelet: configuration dev.nodelet.kube:")
          && line.contains("request.timeout=12345"), "with the override");
      assertThat(effective).contains("kubeconfig.path=" + dir.resolve("work").resolve("kubeconfig").toAbsolutePath())
          .contains("node.name=nodelet-demo")
          .contains("example.token=***");
      awaitLine(line -> line.contains("Kubernetes client registered") && line.contains("request timeout 12345 ms")
          && line.contains("node nodelet-demo"), "of the client with the override");

      Files.delete(file);
      // printed at start, and again once the file is gone
      await().atMost(Duration.ofSeconds(30)).until(() -> lines().stream()
          .filter(line -> line.startsWith("nodelet: configuration dev.nodelet.kube:")
              && line.endsWith("(the launcher's values)")).count() == 2);
      assertThat(lines()).noneMatch(line -> line.contains("s3cr3t-value"));
    } finally {
      process.destroyForcibly();
    }
  }

  @Test
  void withNodeModeOffTheNodesApiWaitingForItsNodeDoesNotHoldReadiness() throws Exception {
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start();
        KubernetesClient admin = new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(
            Files.readString(server.writeKubeconfig(dir.resolve("admin.kubeconfig"))))).build()) {
      Path kubeconfig = server.writeKubeconfig(dir.resolve("cluster.kubeconfig"));
      Process process = launch("--kubeconfig", kubeconfig.toString(), "--node", "late");
      try {
        // not ready while the Node does not exist, past the 10 s after which a waiting component is a problem
        awaitLine(line -> line.startsWith("Nodelet waiting: ") && waitedSeconds(line) >= 12, "after 12 s");
        admin.nodes().resource(new io.fabric8.kubernetes.api.model.NodeBuilder().withNewMetadata().withName("late")
            .endMetadata().build()).create();
        assertThat(awaitLine(Main.READY)).contains("node late");
        assertThat(lines()).noneMatch(line -> line.contains("dev.nodelet.node.RegisteredNode"));
        // serving a cluster, the launcher never opens the demo's jars (lib/demo): of lib/, only Felix's framework
        if (Files.isDirectory(Path.of("/proc", Long.toString(process.pid()), "fd"))) {
          assertThat(openJarsOfLib(process)).as("the jars of target/lib the launcher has open")
              .singleElement().asString().startsWith("org.apache.felix.framework-");
        }
      } finally {
        process.destroyForcibly();
      }
    }
  }

  /** The files under target/lib (lib/demo's too) that the process has open, relative to it ({@code /proc/PID/fd}). */
  private static List<String> openJarsOfLib(Process process) throws IOException {
    Path lib = Path.of("target", "lib").toRealPath();
    List<String> open = new ArrayList<>();
    try (Stream<Path> descriptors = Files.list(Path.of("/proc", Long.toString(process.pid()), "fd"))) {
      for (Path descriptor : descriptors.toList()) {
        try {
          Path file = Files.readSymbolicLink(descriptor);
          if (file.startsWith(lib)) {
            open.add(lib.relativize(file).toString());
          }
        } catch (IOException e) {
          // closed since it was listed
        }
      }
    }
    return open;
  }

  /** The seconds a "Nodelet waiting: ... (N s)" line gives. */
  private static int waitedSeconds(String line) {
    Matcher seconds = Pattern.compile("\\((\\d+) s\\)$").matcher(line);
    return seconds.find() ? Integer.parseInt(seconds.group(1)) : 0;
  }

  @Test
  void readinessSaysThatTheNodeDoesNotExist() throws Exception {
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start()) {
      Path kubeconfig = server.writeKubeconfig(dir.resolve("cluster.kubeconfig"));
      Process process = launch("--kubeconfig", kubeconfig.toString(), "--node", "ghost");
      try {
        assertThat(awaitLine("Nodelet waiting: ")).contains("node ghost does not exist on the API server at "
            + server.url());
        assertThat(lines()).noneMatch(line -> line.startsWith(Main.READY));
      } finally {
        process.destroyForcibly();
      }
    }
  }

  @Test
  void readinessNamesAnUnreachableApiServerAndTheLogStaysShort() throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = free.getLocalPort();
    }
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start()) {
      String kubeconfig = Files.readString(server.writeKubeconfig(dir.resolve("cluster.kubeconfig")))
          .replace(server.url(), "http://127.0.0.1:" + port);
      Path dead = Files.writeString(dir.resolve("dead.kubeconfig"), kubeconfig);
      Process process = launch("--kubeconfig", dead.toString(), "--node", "worker-1");
      try {
        assertThat(awaitLine("Nodelet waiting: ")).contains("the API server at http://127.0.0.1:" + port)
            .contains("has not answered");
        // the first watch to fail names the server (which one depends on the order the reflectors start in); the
        // others that fail within the warning interval are logged at DEBUG
        awaitLine(line -> line.matches(".*the watch of \\S+ .*failed.*")
            && line.contains("(API server 127.0.0.1:" + port + ")"), "of a failed watch naming the server");
        // what the log holds after a while of retrying: its length is what is checked. The launcher says again what
        // it waits for every 10 s: its line of 15 s or more marks the while
        awaitLine(line -> line.matches("Nodelet waiting: .* \\((1[5-9]|[2-9][0-9]) s\\)"),
            "of the launcher still waiting after 15 s");
        List<String> lines = lines();
        assertThat(lines).noneMatch(line -> line.startsWith(Main.READY));
        // no stack traces: one line per attempt of each reflector's backoff
        assertThat(lines).noneMatch(line -> line.startsWith("\tat "));
        assertThat(lines.size()).as("lines in about 15 s:\n" + String.join("\n", lines)).isLessThan(80);
      } finally {
        process.destroyForcibly();
      }
    }
  }

  @Test
  void aComponentWithAnInvalidConfigurationIsReportedOnceHoldsReadinessAndComesUpWhenFixed() throws Exception {
    Path file = Files.createDirectories(dir.resolve("etc")).resolve("dev.nodelet.dra.grpc.cfg");
    Files.writeString(file, "unreachable.withdraw.seconds=-1\n");
    Process process = launch();
    Process driver = null;
    try {
      String error = "Configuration dev.nodelet.dra.grpc is invalid, the external DRA drivers' registration waits for"
          + " a valid one: unreachable.withdraw.seconds: must be between 0 and 86400 seconds, was -1";
      awaitLineContaining(error);
      assertThat(awaitLine("Nodelet waiting: ")).contains("health check dev.nodelet.dra.grpc: CRITICAL")
          .contains("unreachable.withdraw.seconds").contains("etc/dev.nodelet.dra.grpc.cfg");
      assertThat(lines()).noneMatch(line -> line.startsWith(Main.READY))
          .noneMatch(line -> line.contains("failed to activate"));

      Files.writeString(file, "unreachable.withdraw.seconds=30\n");
      awaitLine(Main.READY);
      driver = startExternalDriverWithThreeDevices();
      assertThat(lines().stream().filter(line -> line.contains(error)).count()).as("said once").isEqualTo(1);
    } finally {
      if (driver != null) {
        driver.destroyForcibly();
      }
      process.destroyForcibly();
    }
  }

  @Test
  void aStrategyTargetThatMatchesNoStrategyIsAnError() throws Exception {
    Process process = launch();
    try {
      awaitLine(Main.READY);
      Files.writeString(dir.resolve("etc").resolve("dev.nodelet.configmap.cfg"),
          "strategy.target=(nodelet.strategy=bogus)\n");
      assertThat(awaitLine("nodelet: dev.nodelet.configmap: strategy.target=(nodelet.strategy=bogus)"))
          .contains("matches no strategy service (there are: get, ttl, watch)");
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
  void aStopWhileStartingSaysSoAndLeavesNoTemporaryFolder() throws Exception {
    Path temporary = Files.createDirectories(dir.resolve("tmp"));
    Process process = java("-Djava.io.tmpdir=" + temporary, "-jar",
        JAR.toAbsolutePath().toString(), "--no-shell", "--etc", dir.resolve("etc").toString())
        .redirectErrorStream(true).redirectOutput(output().toFile()).start();
    try {
      // within the first seconds: the temporary work folder holds the admin kubeconfig, the bundles start
      assertThat(awaitLine("Embedded Kubernetes API server listening on")).contains(temporary.toString());
      process.destroy(); // SIGTERM
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isZero();
      assertThat(awaitLine("Nodelet stopped")).isEqualTo("Nodelet stopped before it was ready");
      try (Stream<Path> left = Files.list(temporary)) {
        assertThat(left).as("the temporary work folder is gone").isEmpty();
      }
    } finally {
      process.destroyForcibly();
    }
  }

  /**
   * With persistence on and the API server away, Nodelet serves what it stored for as long as the server is away:
   * the default time limit of readiness (shortened to 3 s here) does not end it.
   */
  @Test
  void withPersistenceItServesStoredObjectsPastTheReadyTimeoutWhileTheApiServerIsAway() throws Exception {
    Path key = dir.resolve("store.key");
    byte[] bytes = new byte[32];
    new java.security.SecureRandom().nextBytes(bytes);
    Files.write(key, bytes);
    Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
    Files.createDirectories(dir.resolve("etc"));
    Files.writeString(dir.resolve("etc").resolve("dev.nodelet.store.watch.cfg"),
        "persistence.dir=" + dir.resolve("store") + "\npersistence.key.file=" + key + "\n");
    Path kubeconfig;
    try (EmbeddedApiServer server = EmbeddedApiServer.builder().build().start()) {
      kubeconfig = server.writeKubeconfig(dir.resolve("cluster.kubeconfig"));
      DemoCluster.seed(server, "nodelet-demo");
      Process first = launch("--kubeconfig", kubeconfig.toString(), "--node", "nodelet-demo");
      try {
        awaitLine(Main.READY);
        assertThat(exec(dir, "nodelet:objects").output()).contains("web-config", "db-credentials");
        first.destroy(); // a clean stop writes every stored object to disk
        assertThat(first.waitFor(60, TimeUnit.SECONDS)).isTrue();
        awaitLine("Nodelet stopped");
      } finally {
        first.destroyForcibly();
      }
    }
    Files.delete(output());
    Process second = launchWith(List.of("-Dnodelet.ready.default.seconds=3"), output(),
        "--kubeconfig", kubeconfig.toString(), "--node", "nodelet-demo");
    try {
      awaitLine("Nodelet not ready after 3 s; persistence is on");
      Exec get = exec(dir, "nodelet:get configmap default web-config");
      assertThat(get.status()).as(get.output()).isZero();
      assertThat(get.output()).contains("greeting: \"hello from web-config\"");
      assertThat(exec(dir, "nodelet:objects").output()).containsPattern("web-config .*from_disk");
      assertThat(awaitLine("Nodelet waiting: ")).contains("has not answered");
      assertThat(second.isAlive()).isTrue();
      assertThat(lines()).noneMatch(line -> line.startsWith("nodelet: not ready"))
          .noneMatch(line -> line.startsWith(Main.READY));
    } finally {
      second.destroyForcibly();
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
