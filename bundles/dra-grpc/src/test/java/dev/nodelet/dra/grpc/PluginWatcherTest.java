package dev.nodelet.dra.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.grpc.internal.FakeDriver;
import dev.nodelet.dra.grpc.pluginregistration.PluginInfo;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registration rules through the exported API only, as a driver's own test would drive them: drivers served on
 * real unix sockets in this JVM, each scan of the folder awaited with {@link PluginWatcher#nextScan()}.
 */
class PluginWatcherTest {

  @TempDir
  Path temp;
  private Path registry;
  private Path plugins;
  private PluginWatcher watcher;
  /** What the listener saw, in order: "registered x" and "withdrawn x" with x the plugin's number. */
  private final List<String> events = new CopyOnWriteArrayList<>();
  private final List<RegisteredPlugin> registered = new CopyOnWriteArrayList<>();
  private final List<FakeDriver> drivers = new ArrayList<>();

  @BeforeEach
  void start() throws Exception {
    registry = Files.createDirectory(temp.resolve("plugins_registry"),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    plugins = Files.createDirectory(temp.resolve("plugins"));
    watcher = PluginWatcher.builder(registry).pollInterval(Duration.ofMillis(20)).build();
    watcher.start(plugin -> {
      registered.add(plugin);
      int number = registered.size();
      events.add("registered " + number);
      return () -> events.add("withdrawn " + number);
    });
  }

  @AfterEach
  void close() throws Exception {
    watcher.close();
    for (FakeDriver d : drivers) {
      d.close();
    }
  }

  private FakeDriver serve(String name, String registrationMode, String... versions) {
    Path endpoint = plugins.resolve(name + ".sock");
    FakeDriver driver = new FakeDriver(registry.resolve(name + "-reg.sock"), endpoint, PluginInfo.newBuilder()
        .setType("DRAPlugin").setName(name).setEndpoint(endpoint.toString()).addAllSupportedVersions(List.of(versions))
        .build(), registrationMode, "rw-------");
    drivers.add(driver);
    return driver;
  }

  private void scanned() throws Exception {
    watcher.nextScan().get(10, TimeUnit.SECONDS);
  }

  @Test
  void aKubeletPluginGetsTheNewestDraAndHealthApisItOffersAndIsToldItIsRegistered() throws Exception {
    FakeDriver driver = serve("gpu.example.com", "rw-------", "v1beta1.DRAPlugin", "v1alpha1.DRAResourceHealth",
        "v1.DRAPlugin", "v1.DRAResourceHealth");
    scanned();

    assertThat(events).containsExactly("registered 1");
    RegisteredPlugin plugin = registered.get(0);
    assertThat(plugin.driverName()).isEqualTo("gpu.example.com");
    assertThat(plugin.registrationSocket()).isEqualTo(driver.registrationSocket);
    assertThat(plugin.endpoint()).isEqualTo(driver.endpoint);
    assertThat(plugin.protocol()).isEqualTo(RegisteredPlugin.DRA_V1);
    assertThat(plugin.healthService()).contains(RegisteredPlugin.HEALTH_V1);
    assertThat(plugin.claimPreparation()).hasValueSatisfying(p -> assertThat(p.driverName())
        .isEqualTo("gpu.example.com"));
    assertThat(plugin.healthSource()).isPresent();
    assertThat(plugin.deviceSnapshots()).isEmpty();
    assertThat(driver.statuses).containsExactly(RegistrationStatus.newBuilder().setPluginRegistered(true).build());
    assertThat(watcher.failedRegistrations()).isEmpty();
  }

  @Test
  void aPluginWithoutAHealthServiceHasNoHealthSourceAndNodeletsStreamIsChosenOnlyAlone() throws Exception {
    serve("a.example.com", "rw-------", "v1beta1.DRAPlugin", "nodelet.dra.v1");
    serve("b.example.com", "rw-------", "nodelet.dra.v1");
    scanned();

    assertThat(registered).extracting(RegisteredPlugin::driverName, RegisteredPlugin::protocol)
        .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("a.example.com", "v1beta1.DRAPlugin"),
            org.assertj.core.groups.Tuple.tuple("b.example.com", "nodelet.dra.v1"));
    RegisteredPlugin a = registered.stream().filter(p -> p.driverName().startsWith("a")).findFirst().orElseThrow();
    RegisteredPlugin b = registered.stream().filter(p -> p.driverName().startsWith("b")).findFirst().orElseThrow();
    assertThat(a.healthService()).isEmpty();
    assertThat(a.healthSource()).isEmpty();
    assertThat(b.deviceSnapshots()).isPresent();
    assertThat(b.claimPreparation()).isEmpty();
  }

  @Test
  void aRefusedRegistrationIsListedWithItsReasonAndTheDriverIsToldWhy() throws Exception {
    FakeDriver driver = serve("old.example.com", "rw-------", "1.0.0");
    scanned();

    assertThat(events).isEmpty();
    assertThat(watcher.failedRegistrations()).singleElement().satisfies(s -> {
      assertThat(s.driverName()).isEqualTo("old.example.com");
      assertThat(s.state()).isEqualTo(DriverStatus.State.NOT_REGISTERED);
      assertThat(s.lastError()).hasValueSatisfying(e -> assertThat(e).startsWith("registration refused: ")
          .contains("supports [1.0.0] but Nodelet speaks one of [v1.DRAPlugin, v1beta1.DRAPlugin, nodelet.dra.v1]"));
    });
    assertThat(driver.statuses).singleElement().satisfies(s -> {
      assertThat(s.getPluginRegistered()).isFalse();
      assertThat(s.getError()).contains("supports [1.0.0]");
    });

    scanned(); // not asked again while the socket stays
    assertThat(driver.statuses).hasSize(1);
  }

  @Test
  void aSocketOthersCanReachIsRefusedWithoutAHandshake() throws Exception {
    FakeDriver driver = serve("loose.example.com", "rw-rw-rw-", "v1.DRAPlugin");
    scanned();

    assertThat(events).isEmpty();
    assertThat(driver.statuses).isEmpty();
    assertThat(watcher.failedRegistrations()).singleElement().satisfies(s -> assertThat(s.lastError())
        .hasValueSatisfying(e -> assertThat(e).contains("has mode 0666; it must be 0600")));
  }

  @Test
  void aRestartedDriverRegistersAgainBeforeItsOldRegistrationIsWithdrawnAndARemovedSocketWithdrawsIt()
      throws Exception {
    FakeDriver first = serve("gpu.example.com", "rw-------", "v1.DRAPlugin");
    scanned();
    first.kill(); // its socket files stay behind, as after SIGKILL
    drivers.remove(first);

    FakeDriver second = serve("gpu.example.com", "rw-------", "v1.DRAPlugin"); // binds new files under the names
    scanned();

    assertThat(events).containsExactly("registered 1", "registered 2", "withdrawn 1");
    assertThat(second.statuses).hasSize(1);

    Files.delete(second.registrationSocket);
    scanned();
    assertThat(events).containsExactly("registered 1", "registered 2", "withdrawn 1", "withdrawn 2");
  }

  @Test
  void twoSocketsOfOneDriverAreTwoRegistrations() throws Exception {
    serve("gpu.example.com", "rw-------", "v1.DRAPlugin");
    Path endpoint = plugins.resolve("gpu-rolling.sock");
    drivers.add(new FakeDriver(registry.resolve("gpu.example.com-pod-2-reg.sock"), endpoint, PluginInfo.newBuilder()
        .setType("DRAPlugin").setName("gpu.example.com").setEndpoint(endpoint.toString())
        .addSupportedVersions("v1.DRAPlugin").build(), "rw-------", "rw-------"));
    scanned();

    assertThat(registered).extracting(RegisteredPlugin::driverName).containsExactly("gpu.example.com",
        "gpu.example.com");
    assertThat(registered).extracting(RegisteredPlugin::endpoint).doesNotHaveDuplicates();
  }

  @Test
  void closingWithdrawsEveryRegistrationAndEndsTheScans() throws Exception {
    serve("gpu.example.com", "rw-------", "v1.DRAPlugin");
    scanned();

    watcher.close();

    assertThat(events).containsExactly("registered 1", "withdrawn 1");
    assertThat(watcher.nextScan()).isCompletedExceptionally();
    assertThat(watcher.failedRegistrations()).isEmpty();
  }

  @Test
  void theListenerCanAskForTheNextScanAndTheFailuresFromTheFirstScanOn() throws Exception {
    watcher.close(); // this test starts its own, with the drivers already there
    serve("a-old.example.com", "rw-------", "1.0.0"); // refused, in the scan before b: sockets go in name order
    serve("b.example.com", "rw-------", "v1.DRAPlugin");
    AtomicReference<PluginWatcher> self = new AtomicReference<>();
    CompletableFuture<CompletableFuture<Void>> asked = new CompletableFuture<>();
    CompletableFuture<List<DriverStatus>> failures = new CompletableFuture<>();
    watcher = PluginWatcher.builder(registry).pollInterval(Duration.ofMillis(20)).build();
    self.set(watcher);
    watcher.start(plugin -> {
      asked.complete(self.get().nextScan()); // not waited on here: the next scan starts once this returns
      failures.complete(self.get().failedRegistrations());
      return () -> { };
    });

    asked.get(10, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS); // the watcher was running, not "not running"
    assertThat(failures.get(10, TimeUnit.SECONDS)).extracting(DriverStatus::driverName)
        .containsExactly("a-old.example.com");
  }

  @Test
  void theBuilderRefusesWhatCannotWorkNamingTheSetting() {
    PluginWatcher.Builder builder = PluginWatcher.builder(registry);
    assertThatThrownBy(() -> builder.pollInterval(Duration.ofMillis(5))).hasMessageContaining("pollInterval")
        .hasMessageContaining("10 ms");
    assertThatThrownBy(() -> builder.ioThreads(0)).hasMessageContaining("ioThreads");
    assertThatThrownBy(() -> builder.callTimeout(Duration.ofSeconds(-1))).hasMessageContaining("callTimeout");
    assertThat(builder.callTimeout(Duration.ZERO).callTimeout()).isEqualTo(Duration.ofSeconds(45));
    assertThatThrownBy(() -> watcher.start(p -> () -> { })).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("started already");
  }
}
