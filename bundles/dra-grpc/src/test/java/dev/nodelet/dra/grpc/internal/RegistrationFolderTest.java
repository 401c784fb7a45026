package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.grpc.PluginWatcher;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A missing registration folder is created with mode 0700, as the kubelet creates its own, and a folder that cannot
 * be created is reported with the reason; drivers served on real unix sockets in this JVM.
 */
class RegistrationFolderTest {

  @TempDir
  Path temp;
  private DriverFolders folders;

  @BeforeEach
  void folders() throws IOException {
    folders = new DriverFolders(temp);
  }

  @AfterEach
  void close() throws Exception {
    folders.close();
  }

  private RegistrationWatcher watch(Path folder) {
    return folders.start(new RegistrationWatcher(folder, Duration.ofMillis(20), new Registrar(folders.transport,
        Duration.ofSeconds(2), PluginWatcher.DEFAULT_CALL_TIMEOUT), folders.publisher()));
  }

  @Test
  void aMissingFolderIsCreatedWithMode0700AndDriversRegisterInIt() throws Exception {
    Path folder = temp.resolve("var/lib/nodelet/plugins_registry");
    RegistrationWatcher watcher = watch(folder);
    watcher.nextScan().get(10, TimeUnit.SECONDS);

    assertThat(Files.isDirectory(folder)).isTrue();
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(folder))).isEqualTo("rwx------");
    assertThat(watcher.failedRegistrations()).isEmpty();
    FakeDriver driver = folders.closeLater(FakeDriver.of(folder, folders.plugins, "a.example.com"));
    await().until(() -> folders.published.containsKey(driver.registrationSocket));
  }

  @Test
  void aFolderThatCannotBeCreatedIsReportedWithTheReason() throws Exception {
    // not even root can create a folder in /proc
    assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs Linux's /proc");
    Path folder = Path.of("/proc/nodelet-" + temp.getFileName(), "plugins_registry");
    RegistrationWatcher watcher = watch(folder);
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
