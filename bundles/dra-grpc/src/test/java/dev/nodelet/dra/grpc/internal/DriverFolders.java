package dev.nodelet.dra.grpc.internal;

import static org.awaitility.Awaitility.await;

import dev.nodelet.controller.Scheduler;
import dev.nodelet.dra.grpc.PluginWatcher;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * What the tests of drivers on real unix sockets share ({@code @AutoClose} on a field): the registration folder
 * (private to this user, as the kubelet's is) and the plugin folder under a temporary folder, a transport, the
 * drivers a watcher published by their registration socket, and whatever a test made; closed in the order that
 * leaves nothing behind: the watcher, then what was made (the last first), then the transport.
 */
final class DriverFolders implements AutoCloseable {

  /** The health back-off of the kubelet plugins registered here: short, so that tests see it grow and cap. */
  static final Duration HEALTH_BACKOFF = Duration.ofMillis(100);
  static final Duration HEALTH_BACKOFF_CAP = Duration.ofMillis(400);

  final Path registry;
  final Path plugins;
  final Transport transport = new Transport(1);
  final Map<Path, RegisteredDriver> published = new ConcurrentHashMap<>();
  private final Scheduler healthTime; // null: the transport's event loop
  private final Deque<AutoCloseable> resources = new ArrayDeque<>();
  private RegistrationWatcher watcher;

  DriverFolders(Path temp) throws IOException {
    this(temp, null);
  }

  /** @param healthTime the time of the plugins' health back-off, a drivable scheduler for tests that move it */
  DriverFolders(Path temp, Scheduler healthTime) throws IOException {
    this.healthTime = healthTime;
    registry = ExampleProcesses.registry(temp);
    plugins = Files.createDirectory(temp.resolve("plugins"));
  }

  /** Publishes a registered driver into {@link #published} until it is withdrawn. */
  RegistrationWatcher.Publisher publisher() {
    return (driver, socket) -> {
      published.put(socket, driver);
      return () -> published.remove(socket, driver);
    };
  }

  /** Starts a watcher of the registration folder that publishes into {@link #published}. */
  RegistrationWatcher startWatcher() {
    return startWatcher(Duration.ofSeconds(2), publisher());
  }

  /** Starts a watcher of the registration folder, polling every 20 ms, that hands registered drivers to {@code to}. */
  RegistrationWatcher startWatcher(Duration handshakeTimeout, RegistrationWatcher.Publisher to) {
    return startWatcher(registry, handshakeTimeout, to);
  }

  /** The same, of {@code folder} instead of {@link #registry}. */
  RegistrationWatcher startWatcher(Path folder, Duration handshakeTimeout, RegistrationWatcher.Publisher to) {
    return start(new RegistrationWatcher(folder, Duration.ofMillis(20), new Registrar(transport, handshakeTimeout,
        PluginWatcher.DEFAULT_CALL_TIMEOUT, HEALTH_BACKOFF, HEALTH_BACKOFF_CAP, healthTime), to));
  }

  /** The command-line arguments of an example driver naming both folders and the driver, then {@code more}. */
  String[] args(String driver, String... more) {
    return Stream.concat(Stream.of("--registry", registry.toString(), "--plugins", plugins.toString(), "--name",
        driver), Arrays.stream(more)).toArray(String[]::new);
  }

  /** Starts {@code watcher} and closes it first. */
  RegistrationWatcher start(RegistrationWatcher watcher) {
    this.watcher = watcher;
    watcher.start();
    return watcher;
  }

  /** Closes {@code resource} after the watcher, before whatever was registered earlier; returns it. */
  <T extends AutoCloseable> T closeLater(T resource) {
    resources.push(resource);
    return resource;
  }

  /** The driver the watcher published for {@code driver}'s registration socket, once it did. */
  RegisteredDriver registered(FakeDriver driver) {
    await().until(() -> published.containsKey(driver.registrationSocket));
    return published.get(driver.registrationSocket);
  }

  @Override
  public void close() throws Exception {
    if (watcher != null) {
      watcher.close();
    }
    while (!resources.isEmpty()) {
      resources.pop().close();
    }
    transport.close();
  }
}
