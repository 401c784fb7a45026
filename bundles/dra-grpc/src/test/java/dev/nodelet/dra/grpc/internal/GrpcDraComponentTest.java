package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.nodelet.dra.DraDriver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.util.converter.Converters;

/**
 * The component's configuration: invalid at activation fails it naming the key; later an invalid one is refused and
 * the drivers stay registered; a valid one withdraws them and registers them again through the new watch.
 */
class GrpcDraComponentTest {

  @TempDir
  Path temp;

  private final List<String> registry = new CopyOnWriteArrayList<>();
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

  private GrpcDraComponent component(GrpcDraConfiguration config) {
    return new GrpcDraComponent((DraDriver registered, java.util.Dictionary<String, Object> properties) -> {
      registry.add("register " + registered.driverName());
      return () -> registry.add("unregister " + registered.driverName());
    }, config);
  }

  @Test
  void anInvalidValueAtActivationFailsItNamingTheKey() {
    assertThatThrownBy(() -> component(config(Map.of("unreachable.withdraw.seconds", -1))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unreachable.withdraw.seconds: must be between 0 and 86400 seconds, was -1");
    assertThatThrownBy(() -> component(config(Map.of("io.threads", "two"))))
        .hasMessageStartingWith("io.threads: not a whole number");
    assertThatThrownBy(() -> component(config(Map.of("registration.folder", " "))))
        .hasMessage("registration.folder: must not be empty");
  }

  @Test
  void anInvalidChangeIsRefusedAndAValidOneRegistersTheDriversAgain() throws Exception {
    Path folder = ExampleProcesses.registry(temp);
    Path plugins = Files.createDirectory(temp.resolve("plugins"));
    component = component(config(Map.of("registration.folder", folder.toString(), "poll.interval.millis", 50)));
    driver = FakeDriver.of(folder, plugins, "gpu.example.com");
    await().until(() -> registry.equals(List.of("register gpu.example.com")));

    for (Map<String, Object> bad : List.of(Map.<String, Object>of("registration.folder", folder.toString(),
        "poll.interval.millis", 1), Map.<String, Object>of("registration.folder", folder.toString(), "io.threads", 0))) {
      component.modified(config(bad));
    }
    assertThat(component.settings().pollInterval().toMillis()).isEqualTo(50);
    assertThat(registry).as("nothing withdrawn").containsExactly("register gpu.example.com");

    component.modified(config(Map.of("registration.folder", folder.toString(), "poll.interval.millis", 60)));
    assertThat(component.settings().pollInterval().toMillis()).isEqualTo(60);
    await().until(() -> registry.equals(List.of("register gpu.example.com", "unregister gpu.example.com",
        "register gpu.example.com")));

    component.deactivate();
    component = null;
    assertThat(registry).last().isEqualTo("unregister gpu.example.com");
    await().until(() -> Thread.getAllStackTraces().keySet().stream()
        .noneMatch(t -> t.getName().startsWith(Transport.THREAD_PREFIX)));
  }
}
