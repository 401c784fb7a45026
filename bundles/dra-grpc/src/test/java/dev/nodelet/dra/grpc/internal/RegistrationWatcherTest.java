package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.Subscription;
import dev.nodelet.dra.grpc.PluginWatcher;
import dev.nodelet.dra.grpc.pluginregistration.PluginInfo;
import dev.nodelet.dra.grpc.pluginregistration.RegistrationStatus;
import dev.nodelet.dra.grpc.v1.DeviceAttribute;
import dev.nodelet.dra.grpc.v1.ListAndWatchResourcesResponse;
import dev.nodelet.testing.process.Descriptors;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.grpc.BindableService;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The watcher, the handshake and the stream against drivers served on real unix sockets in this JVM. */
class RegistrationWatcherTest {

  @TempDir
  Path temp;
  private DriverFolders folders;
  private Path registry;
  private Path plugins;
  private Map<Path, RegisteredDriver> published;

  @BeforeEach
  void folders() throws IOException {
    folders = new DriverFolders(temp);
    registry = folders.registry;
    plugins = folders.plugins;
    published = folders.published;
  }

  @AfterEach
  void close() throws Exception {
    folders.close();
  }

  private void startWatcher() {
    folders.startWatcher();
  }

  private <T extends AutoCloseable> T closeLater(T resource) {
    return folders.closeLater(resource);
  }

  /** A fake driver registered as {@code name}, serving {@code endpointServices}; closed after the test. */
  private FakeDriver register(String name, BindableService... endpointServices) {
    return closeLater(FakeDriver.of(registry, plugins, name, endpointServices));
  }

  private RecordingListener subscribe(FakeDriver driver) {
    RecordingListener listener = new RecordingListener();
    closeLater(((GrpcDraDriver) folders.registered(driver)).subscribe(listener));
    return listener;
  }

  /** Waits until the watcher has scanned the folder twice more: what it would do with the folder as it is, it did. */
  private static void awaitTwoScans(RegistrationWatcher watcher) {
    long scans = watcher.scans();
    await().until(() -> watcher.scans() >= scans + 2);
  }

  @Test
  void aDriverRegistersAndItsSnapshotsArriveAsPoolsOfV1Devices() throws Exception {
    startWatcher();
    FakeDriver driver = register("gpu.example.com", Snapshots.sending(Snapshots.devices("node-a", 2)));

    RecordingListener listener = subscribe(driver);

    RegisteredDriver registered = published.get(driver.registrationSocket);
    assertThat(registered.driverName()).isEqualTo("gpu.example.com");
    assertThat(registered.endpoint()).isEqualTo(driver.endpoint);
    assertThat(driver.statuses).containsExactly(RegistrationStatus.newBuilder().setPluginRegistered(true).build());
    await().until(() -> listener.snapshots.size() == 1);
    Pool pool = listener.snapshots.get(0).get(0);
    assertThat(pool.name()).isEqualTo("node-a");
    assertThat(pool.devices()).extracting(Device::getName).containsExactly("dev-0", "dev-1");
    Device device = pool.devices().get(1);
    assertThat(device.getAttributes()).containsExactlyInAnyOrderEntriesOf(Map.of(
        "model", new io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute(null, null, "a100", null),
        "index", new io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute(null, 1L, null, null),
        "ecc", new io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute(true, null, null, null),
        "driverVersion", new io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute(null, null, null, "1.2.3")));
    assertThat(device.getCapacity().get("memory").getValue()).isEqualTo(new Quantity("80Gi"));
    assertThat(listener.failures).isEmpty();

    Files.delete(driver.registrationSocket);
    await().until(() -> published.isEmpty());
  }

  @Test
  void aDriverWithoutListAndWatchResourcesIsNotRetried() throws Exception {
    startWatcher();
    FakeDriver driver = register("none.example.com");

    RecordingListener listener = subscribe(driver);

    await().until(() -> listener.failures.size() == 1);
    assertThat(listener.failures.get(0).retryable()).isFalse();
    assertThat(listener.failures.get(0).cause()).hasMessageContaining(
        "DRA driver none.example.com does not implement ListAndWatchResources");
  }

  @Test
  void aCleanEndOfTheStreamIsCompletionAfterTheSnapshot() throws Exception {
    startWatcher();
    FakeDriver driver = register("once.example.com", Snapshots.sendingOnce(Snapshots.devices("pool", 1)));

    RecordingListener listener = subscribe(driver);

    await().until(() -> listener.completed);
    assertThat(listener.snapshots).hasSize(1);
    assertThat(listener.failures).isEmpty();
  }

  @Test
  void aMalformedMessageIsAClearRetryableErrorAndOtherDriversCarryOn() throws Exception {
    startWatcher();
    FakeDriver good = register("good.example.com", Snapshots.sending(Snapshots.devices("pool", 1)));
    FakeDriver garbage = closeLater(new FakeDriver(registry.resolve("garbage-reg.sock"),
        plugins.resolve("garbage.sock"), FakeDriver.info("garbage.example.com", plugins.resolve("garbage.sock")),
        "rw-------", "rw-------", Snapshots.sendingBytes(new byte[] {0x0a, 0x05, 0x01})));
    ListAndWatchResourcesResponse noValue = ListAndWatchResourcesResponse.newBuilder().addPools(
        dev.nodelet.dra.grpc.v1.Pool.newBuilder().setName("pool").addDevices(dev.nodelet.dra.grpc.v1.Device
            .newBuilder().setName("dev-0").putAttributes("model", DeviceAttribute.getDefaultInstance()))).build();
    FakeDriver empty = register("empty.example.com", Snapshots.sending(noValue));

    RecordingListener goodListener = subscribe(good);
    RecordingListener garbageListener = subscribe(garbage);
    RecordingListener emptyListener = subscribe(empty);

    await().until(() -> garbageListener.failures.size() == 1 && emptyListener.failures.size() == 1);
    assertThat(garbageListener.failures.get(0).retryable()).isTrue();
    assertThat(garbageListener.failures.get(0).cause()).hasMessageContaining(
        "DRA driver garbage.example.com sent a malformed message that is not a"
            + " nodelet.dra.v1.ListAndWatchResourcesResponse");
    assertThat(emptyListener.failures.get(0).retryable()).isTrue();
    assertThat(emptyListener.failures.get(0).cause()).hasMessage("DRA driver empty.example.com sent a malformed"
        + " snapshot: device \"dev-0\" of pool \"pool\": attribute \"model\" has no value");
    assertThat(garbageListener.snapshots).isEmpty();
    assertThat(emptyListener.snapshots).isEmpty();
    await().until(() -> goodListener.snapshots.size() == 1);
    assertThat(goodListener.failures).isEmpty();
    assertThat(published).hasSize(3);
  }

  @Test
  void looseModesAreRefusedUntilFixed() throws Exception {
    Files.setPosixFilePermissions(registry, PosixFilePermissions.fromString("rwxr-xr-x"));
    RegistrationWatcher watcher = folders.startWatcher();
    FakeDriver looseFolder = register("a.example.com");
    FakeDriver looseSocket = closeLater(new FakeDriver(registry.resolve("b-reg.sock"), plugins.resolve("b.sock"),
        FakeDriver.info("b.example.com", plugins.resolve("b.sock")), "rw-rw-rw-", "rw-------"));
    FakeDriver looseEndpoint = closeLater(new FakeDriver(registry.resolve("c-reg.sock"), plugins.resolve("c.sock"),
        FakeDriver.info("c.example.com", plugins.resolve("c.sock")), "rw-------", "rw-r--r--"));

    // a loose folder: nobody is even asked
    Files.createFile(registry.resolve("marker"));
    awaitTwoScans(watcher);
    assertThat(published).isEmpty();
    assertThat(looseFolder.statuses).isEmpty();

    Files.setPosixFilePermissions(registry, PosixFilePermissions.fromString("rwx------"));
    await().until(() -> published.containsKey(looseFolder.registrationSocket));
    await().until(() -> looseEndpoint.statuses.size() == 1);
    assertThat(looseEndpoint.statuses.get(0).getPluginRegistered()).isFalse();
    assertThat(looseEndpoint.statuses.get(0).getError()).isEqualTo("plugin \"c.example.com\" at "
        + looseEndpoint.registrationSocket + ": endpoint " + looseEndpoint.endpoint + " has mode 0644; it must be"
        + " 0600 (no access for group or others)");
    assertThat(looseSocket.statuses).isEmpty();
    assertThat(published).containsOnlyKeys(looseFolder.registrationSocket);

    Files.setPosixFilePermissions(looseSocket.registrationSocket, PosixFilePermissions.fromString("rw-------"));
    await().until(() -> published.containsKey(looseSocket.registrationSocket));

    // loosening a registered socket withdraws its driver
    Files.setPosixFilePermissions(looseSocket.registrationSocket, PosixFilePermissions.fromString("rw-rw----"));
    await().until(() -> !published.containsKey(looseSocket.registrationSocket));
  }

  @Test
  void invalidInfoIsRefusedAndTheDriverIsToldWhy() throws Exception {
    startWatcher();
    Path endpoint = plugins.resolve("x.sock");
    FakeDriver csi = closeLater(new FakeDriver(registry.resolve("csi-reg.sock"), endpoint,
        FakeDriver.info("csi.example.com", endpoint).toBuilder().setType("CSIPlugin").build(), "rw-------",
        "rw-------"));
    Path endpoint2 = plugins.resolve("y.sock");
    FakeDriver badName = closeLater(new FakeDriver(registry.resolve("bad-reg.sock"), endpoint2,
        FakeDriver.info("Bad_Name", endpoint2), "rw-------", "rw-------"));
    Path endpoint3 = plugins.resolve("z.sock");
    FakeDriver unknownVersion = closeLater(new FakeDriver(registry.resolve("kubelet-reg.sock"), endpoint3,
        PluginInfo.newBuilder(FakeDriver.info("kubelet.example.com", endpoint3)).clearSupportedVersions()
            .addSupportedVersions("v2.DRAPlugin").build(), "rw-------", "rw-------"));

    await().until(() -> !csi.statuses.isEmpty() && !badName.statuses.isEmpty() && !unknownVersion.statuses.isEmpty());
    assertThat(csi.statuses.get(0).getError()).isEqualTo("plugin \"csi.example.com\" at " + csi.registrationSocket
        + " has type \"CSIPlugin\"; Nodelet registers only DRAPlugin");
    assertThat(badName.statuses.get(0).getError()).endsWith(
        ": the name must be a DNS subdomain of at most 63 characters");
    assertThat(unknownVersion.statuses.get(0).getError()).contains(
        " supports [v2.DRAPlugin] but Nodelet speaks one of [v1.DRAPlugin, v1beta1.DRAPlugin, nodelet.dra.v1]");
    assertThat(published).isEmpty();
  }

  /** What {@code nodelet:drivers} lists of the folder: each socket that did not register, with the reason. */
  @Test
  void failedRegistrationsAreKeptWithTheirReasonUntilTheSocketRegistersOrGoes() throws Exception {
    RegistrationWatcher watcher = folders.startWatcher();
    Path endpoint = plugins.resolve("z.sock");
    FakeDriver unknownVersion = closeLater(new FakeDriver(registry.resolve("kubelet-reg.sock"), endpoint,
        PluginInfo.newBuilder(FakeDriver.info("kubelet.example.com", endpoint)).clearSupportedVersions()
            .addSupportedVersions("v2.DRAPlugin").build(), "rw-------", "rw-------"));
    FakeDriver looseSocket = closeLater(new FakeDriver(registry.resolve("b-reg.sock"), plugins.resolve("b.sock"),
        FakeDriver.info("b.example.com", plugins.resolve("b.sock")), "rw-rw-rw-", "rw-------"));

    await().until(() -> watcher.failedRegistrations().size() == 2);
    assertThat(watcher.failedRegistrations()).allSatisfy(failure -> {
      assertThat(failure.state()).isEqualTo(DriverStatus.State.NOT_REGISTERED);
      assertThat(failure.lastSnapshot()).isEmpty();
    });
    assertThat(watcher.failedRegistrations()).extracting(DriverStatus::driverName)
        .containsExactly("b-reg.sock", "kubelet.example.com");
    assertThat(watcher.failedRegistrations().get(0).lastError()).hasValue("registration socket "
        + looseSocket.registrationSocket + " has mode 0666; it must be 0600 (no access for group or others); the"
        + " driver is not registered");
    assertThat(watcher.failedRegistrations().get(1).lastError()).hasValueSatisfying(reason -> assertThat(reason)
        .startsWith("registration refused: plugin \"kubelet.example.com\" at " + unknownVersion.registrationSocket
            + " supports [v2.DRAPlugin] but Nodelet speaks one of"));

    Files.setPosixFilePermissions(looseSocket.registrationSocket, PosixFilePermissions.fromString("rw-------"));
    await().until(() -> published.containsKey(looseSocket.registrationSocket));
    assertThat(watcher.failedRegistrations()).extracting(DriverStatus::driverName)
        .containsExactly("kubelet.example.com");
    Files.delete(unknownVersion.registrationSocket);
    await().until(() -> watcher.failedRegistrations().isEmpty());

    Files.setPosixFilePermissions(registry, PosixFilePermissions.fromString("rwxr-x---"));
    await().until(() -> watcher.failedRegistrations().size() == 1);
    assertThat(watcher.failedRegistrations().get(0).driverName()).isEqualTo(registry.toString());
    assertThat(watcher.failedRegistrations().get(0).lastError()).hasValueSatisfying(reason -> assertThat(reason)
        .startsWith("registration folder " + registry + " has mode 0750"));
  }

  @Test
  void aWatcherThatFailedSaysSoAmongTheFailedRegistrations() throws Exception {
    RegistrationWatcher watcher = folders.startWatcher(Duration.ofSeconds(2), (driver, socket) -> {
      throw new Error("the service registry is gone"); // an Error: a RuntimeException refuses that driver only
    });
    register("gpu.example.com");
    await().until(() -> !watcher.failedRegistrations().isEmpty());
    assertThat(watcher.failedRegistrations()).singleElement().satisfies(failure -> {
      assertThat(failure.driverName()).isEqualTo(registry.toString());
      assertThat(failure.lastError()).hasValue("the registration watcher of " + registry + " failed"
          + " (java.lang.Error: the service registry is gone); no driver registers until the"
          + " component restarts (restart the bundle nodelet-dra-grpc, or change configuration"
          + " dev.nodelet.dra.grpc)");
    });
  }

  /** kill -9 of a driver: its sockets stay, nothing answers; past the limit the driver is withdrawn. */
  @Test
  void aDriverUnreachablePastTheLimitIsWithdrawn() throws Exception {
    RegistrationWatcher watcher = folders.start(new RegistrationWatcher(registry, Duration.ofMillis(20),
        Duration.ofMillis(500),
        new Registrar(folders.transport, Duration.ofSeconds(2), PluginWatcher.DEFAULT_CALL_TIMEOUT),
        folders.publisher()));
    FakeDriver driver = register("gpu.example.com", Snapshots.sending(Snapshots.devices("pool", 1)));
    RecordingListener listener = subscribe(driver);
    await().until(() -> listener.snapshots.size() == 1);
    RegisteredDriver registered = published.get(driver.registrationSocket);
    assertThat(registered.unreachableFor(System.nanoTime())).isZero();

    driver.killEndpoint();
    await().until(() -> listener.failures.size() == 1);
    assertThat(listener.failures.get(0).retryable()).isTrue();
    assertThat(registered.unreachableFor(System.nanoTime())).isPositive();
    await().atMost(Duration.ofSeconds(10)).until(() -> !published.containsKey(driver.registrationSocket));
    // the withdrawal is published first, then recorded as a failed registration
    await().atMost(Duration.ofSeconds(10)).until(() -> !watcher.failedRegistrations().isEmpty());
    assertThat(watcher.failedRegistrations()).singleElement().satisfies(failure -> {
      assertThat(failure.driverName()).isEqualTo("gpu.example.com");
      assertThat(failure.lastError()).hasValueSatisfying(reason -> assertThat(reason)
          .startsWith("unreachable at " + driver.endpoint + " for "));
    });
    // the same stale socket file does not register it again
    awaitTwoScans(watcher);
    assertThat(published).doesNotContainKey(driver.registrationSocket);
  }

  @Test
  void closingLeavesNoThreadSocketOrRegistrationBehind() throws Exception {
    long socketsBefore = Descriptors.sockets();
    FakeDriver driver = FakeDriver.of(registry, plugins, "gpu.example.com",
        Snapshots.sending(Snapshots.devices("pool", 1)));
    List<Subscription> subscriptions = new ArrayList<>();
    // like the controller: a withdrawn driver's subscription is closed
    RegistrationWatcher watcher = folders.start(new RegistrationWatcher(registry, Duration.ofMillis(20),
        new Registrar(folders.transport, Duration.ofSeconds(2), PluginWatcher.DEFAULT_CALL_TIMEOUT),
        (registered, socket) -> {
          RecordingListener listener = new RecordingListener();
          Subscription subscription = ((GrpcDraDriver) registered).subscribe(listener);
          subscriptions.add(subscription);
          published.put(socket, registered);
          return () -> {
            published.remove(socket);
            subscription.close();
          };
        }));
    await().until(() -> published.size() == 1);

    watcher.close();
    folders.transport.close();
    driver.close();

    assertThat(published).isEmpty();
    await().until(() -> Thread.getAllStackTraces().keySet().stream()
        .noneMatch(t -> t.getName().startsWith(Transport.THREAD_PREFIX) || t.getName().startsWith("grpc-")));
    await().until(() -> Descriptors.sockets() == socketsBefore);
  }

  @Test
  void aMissingFolderIsCreatedWithMode0700AndDriversRegisterInIt() throws Exception {
    Path folder = temp.resolve("var/lib/nodelet/plugins_registry");
    RegistrationWatcher watcher = folders.startWatcher(folder, Duration.ofSeconds(2), folders.publisher());
    watcher.nextScan().get(10, TimeUnit.SECONDS);

    assertThat(Files.isDirectory(folder)).isTrue();
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(folder))).isEqualTo("rwx------");
    assertThat(watcher.failedRegistrations()).isEmpty();
    FakeDriver driver = closeLater(FakeDriver.of(folder, plugins, "a.example.com"));
    await().until(() -> published.containsKey(driver.registrationSocket));
  }

  @Test
  void aFolderThatCannotBeCreatedIsReportedWithTheReason() throws Exception {
    // not even root can create a folder in /proc
    assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs Linux's /proc");
    Path folder = Path.of("/proc/nodelet-" + temp.getFileName(), "plugins_registry");
    RegistrationWatcher watcher = folders.startWatcher(folder, Duration.ofSeconds(2), folders.publisher());
    watcher.nextScan().get(10, TimeUnit.SECONDS);

    assertThat(watcher.failedRegistrations()).singleElement().satisfies(failure -> {
      assertThat(failure.state()).isEqualTo(DriverStatus.State.NOT_REGISTERED);
      assertThat(failure.lastError()).hasValue("registration folder " + folder + " does not exist: create it with"
          + " mode 0700 (or let Nodelet create it), or set registration.folder of dev.nodelet.dra.grpc; drivers"
          + " register once it exists (it could not be created: NoSuchFileException: /proc/nodelet-"
          + temp.getFileName() + ")");
    });
  }
}
