package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.nodelet.configuration.RecordingPublisher;
import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.DriverStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.util.converter.Converters;

/**
 * The component's configuration: an invalid first one waits, watching nothing, and holds readiness naming the key
 * until a valid one starts the watch; later an invalid one is refused and the drivers stay registered; a valid one
 * withdraws them and registers them again through the new watch.
 */
class GrpcDraComponentTest {

  @TempDir
  Path temp;

  private final RecordingPublisher registry = new RecordingPublisher();
  private GrpcDraComponent component;
  private FakeDriver driver;

  @AfterEach
  void close() throws Exception {
    if (component != null) {
      component.deactivate();
    }
    if (driver != null) {
      driver.close();
    }
  }

  private static GrpcDraConfiguration config(Map<String, Object> properties) {
    return Converters.standardConverter().convert(properties).to(GrpcDraConfiguration.class);
  }

  private List<String> drivers() {
    return registry.services(DeviceSnapshots.class).stream().map(DeviceSnapshots::driverName).toList();
  }

  @Test
  void everyInvalidValueNamesItsKey() {
    Map.of(Map.<String, Object>of("unreachable.withdraw.seconds", -1),
            "unreachable.withdraw.seconds: must be between 0 and 86400 seconds, was -1",
            Map.<String, Object>of("io.threads", "two"), "io.threads: not a whole number",
            Map.<String, Object>of("registration.folder", " "), "registration.folder: must not be empty",
            Map.<String, Object>of("poll.interval.millis", 1), "poll.interval.millis: must be between 10 and")
        .forEach((properties, error) -> {
          GrpcDraComponent waiting = new GrpcDraComponent(registry, config(properties));
          try {
            assertThat(registry.health()).startsWith("CRITICAL the external DRA drivers' registration waits for a"
                + " valid configuration dev.nodelet.dra.grpc: " + error).endsWith("(etc/dev.nodelet.dra.grpc.cfg)");
            assertThat(waiting.settings()).isEmpty();
          } finally {
            waiting.deactivate();
          }
          assertThat(registry.registered).isEmpty();
        });
  }

  @Test
  void anInvalidFirstConfigurationWaitsWithoutAWatchUntilAValidOneRegistersTheDrivers() throws Exception {
    Path folder = ExampleProcesses.registry(temp);
    Path plugins = Files.createDirectory(temp.resolve("plugins"));
    driver = FakeDriver.of(folder, plugins, "gpu.example.com");
    component = new GrpcDraComponent(registry, config(Map.of("registration.folder", folder.toString(),
        "unreachable.withdraw.seconds", -1)));
    assertThat(registry.health()).contains("unreachable.withdraw.seconds: must be between 0 and 86400 seconds");
    assertThat(Thread.getAllStackTraces().keySet()).as("no watch, no event loop")
        .noneMatch(t -> t.getName().startsWith(Transport.THREAD_PREFIX));

    component.modified(config(Map.of("registration.folder", folder.toString(), "poll.interval.millis", 50)),
        Map.of());
    await().until(() -> drivers().equals(List.of("gpu.example.com")));
    assertThat(registry.healthCheck()).as("readiness no longer held").isEmpty();
  }

  @Test
  void anInvalidChangeIsRefusedAndAValidOneRegistersTheDriversAgain() throws Exception {
    Path folder = ExampleProcesses.registry(temp);
    Path plugins = Files.createDirectory(temp.resolve("plugins"));
    component = new GrpcDraComponent(registry, config(Map.of("registration.folder", folder.toString(),
        "poll.interval.millis", 50)));
    driver = FakeDriver.of(folder, plugins, "gpu.example.com");
    await().until(() -> drivers().equals(List.of("gpu.example.com")));

    for (Map<String, Object> bad : List.of(Map.<String, Object>of("registration.folder", folder.toString(),
        "poll.interval.millis", 1), Map.<String, Object>of("registration.folder", folder.toString(), "io.threads",
            0))) {
      component.modified(config(bad), Map.of());
    }
    component.modified(config(Map.of("registration.folder", folder.toString(), "poll.interval.millis", 50)),
        Map.of());
    assertThat(component.settings().orElseThrow().pollInterval().toMillis()).isEqualTo(50);
    assertThat(registry.history).as("nothing withdrawn, no health check")
        .containsExactly("register [dev.nodelet.dra.DeviceSnapshots]");

    component.modified(config(Map.of("registration.folder", folder.toString(), "poll.interval.millis", 60)),
        Map.of());
    assertThat(component.settings().orElseThrow().pollInterval().toMillis()).isEqualTo(60);
    await().until(() -> registry.history.equals(List.of("register [dev.nodelet.dra.DeviceSnapshots]",
        "unregister [dev.nodelet.dra.DeviceSnapshots]", "register [dev.nodelet.dra.DeviceSnapshots]")));

    component.deactivate();
    component = null;
    assertThat(registry.registered).isEmpty();
    await().until(() -> Thread.getAllStackTraces().keySet().stream()
        .noneMatch(t -> t.getName().startsWith(Transport.THREAD_PREFIX)));
  }

  @Test
  void theComponentReportsTheRegistrationsThatFailed() throws Exception {
    Path folder = ExampleProcesses.registry(temp);
    Path plugins = Files.createDirectory(temp.resolve("plugins"));
    component = new GrpcDraComponent(registry, config(Map.of("registration.folder", folder.toString(),
        "poll.interval.millis", 50)));
    Path endpoint = plugins.resolve("csi.sock");
    driver = new FakeDriver(folder.resolve("csi-reg.sock"), endpoint,
        FakeDriver.info("csi.example.com", endpoint).toBuilder().setType("CSIPlugin").build(), "rw-------",
        "rw-------");
    await().until(() -> !component.failedRegistrations().isEmpty());
    assertThat(component.failedRegistrations()).singleElement().satisfies(failure -> {
      assertThat(failure.driverName()).isEqualTo("csi.example.com");
      assertThat(failure.state()).isEqualTo(DriverStatus.State.NOT_REGISTERED);
      assertThat(failure.lastError()).hasValue("registration refused: plugin \"csi.example.com\" at "
          + folder.resolve("csi-reg.sock") + " has type \"CSIPlugin\"; Nodelet registers only DRAPlugin");
    });
    assertThat(drivers()).isEmpty();
  }
}
