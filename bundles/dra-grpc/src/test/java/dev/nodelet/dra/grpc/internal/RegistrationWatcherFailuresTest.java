package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.grpc.PluginWatcher;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What fails one registration and what ends the watch, against drivers served on real unix sockets in this JVM: a
 * transport that cannot dial and a publisher that throws are failures of that socket; the waiters of a scan that
 * throws or that {@code close()} cuts short fail.
 */
class RegistrationWatcherFailuresTest {

  private static final String NO_EPOLL = "unix domain sockets need Netty's epoll transport, which is not available"
      + " here: java.lang.UnsatisfiedLinkError: no libnetty_transport_native_epoll in this test";

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

  private FakeDriver register(String name) {
    return folders.closeLater(FakeDriver.of(folders.registry, folders.plugins, name));
  }

  private static void scanned(RegistrationWatcher watcher) throws Exception {
    watcher.nextScan().get(10, TimeUnit.SECONDS);
  }

  /** Waits for {@code latch}; the watcher's close() ends the wait (and keeps the interrupt). */
  private static void awaitOrInterrupt(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void aTransportThatCannotDialFailsEachSocketOnceWithItsCauseAndTheWatchGoesOn() throws Exception {
    AtomicInteger groupsAsked = new AtomicInteger();
    Transport noEpoll = folders.closeLater(new Transport(1, threads -> {
      groupsAsked.incrementAndGet();
      throw new IllegalStateException(NO_EPOLL);
    }));
    RegistrationWatcher watcher = folders.start(new RegistrationWatcher(folders.registry, Duration.ofMillis(20),
        new Registrar(noEpoll, Duration.ofSeconds(2), PluginWatcher.DEFAULT_CALL_TIMEOUT), folders.publisher()));
    FakeDriver a = register("a.example.com");
    FakeDriver b = register("b.example.com");
    scanned(watcher);

    assertThat(watcher.failedRegistrations()).extracting(DriverStatus::driverName)
        .containsExactly("a.example.com-reg.sock", "b.example.com-reg.sock"); // no entry of a watch that ended
    assertThat(watcher.failedRegistrations()).allSatisfy(failure -> {
      assertThat(failure.state()).isEqualTo(DriverStatus.State.NOT_REGISTERED);
      assertThat(failure.backoff()).isZero();
    });
    assertThat(watcher.failedRegistrations().get(0).lastError()).hasValue("cannot dial registration socket "
        + a.registrationSocket + ": " + NO_EPOLL + "; it is tried again when the socket is replaced");
    assertThat(a.statuses).isEmpty();
    assertThat(b.statuses).isEmpty();
    assertThat(groupsAsked).hasValue(2);

    scanned(watcher); // the watch goes on, and does not dial the same sockets again
    scanned(watcher);
    assertThat(groupsAsked).hasValue(2);
    assertThat(folders.published).isEmpty();
  }

  @Test
  void aPublisherThatThrowsRefusesThatDriverOnlyAndItIsNotAskedAgain() throws Exception {
    RegistrationWatcher watcher = folders.startWatcher(Duration.ofSeconds(2), (driver, socket) -> {
      if (driver.driverName().equals("refused.example.com")) {
        throw new IllegalArgumentException("no room for it");
      }
      return folders.publisher().publish(driver, socket);
    });
    FakeDriver refused = register("refused.example.com");
    FakeDriver good = register("good.example.com");
    scanned(watcher);

    assertThat(folders.published).containsOnlyKeys(good.registrationSocket);
    assertThat(watcher.failedRegistrations()).singleElement().satisfies(failure -> {
      assertThat(failure.driverName()).isEqualTo("refused.example.com");
      assertThat(failure.lastError()).hasValue("the listener refused DRA driver refused.example.com:"
          + " java.lang.IllegalArgumentException: no room for it");
    });
    assertThat(refused.statuses).hasSize(1);

    scanned(watcher);
    assertThat(refused.statuses).as("not asked again while its socket stays").hasSize(1);
    assertThat(folders.published).containsOnlyKeys(good.registrationSocket);
  }

  @Test
  void theWaitersOfAScanThatThrowsFail() throws Exception {
    CountDownLatch firstEntered = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    RegistrationWatcher watcher = folders.startWatcher(Duration.ofSeconds(2), (driver, socket) -> {
      if (driver.driverName().equals("broken.example.com")) {
        throw new Error("the publisher broke"); // an Error ends the watch
      }
      firstEntered.countDown();
      awaitOrInterrupt(releaseFirst);
      return () -> { };
    });
    register("first.example.com");
    assertThat(firstEntered.await(10, TimeUnit.SECONDS)).isTrue(); // a scan is in progress: its sockets are listed
    CompletableFuture<Void> next = watcher.nextScan(); // so this waits on the scan after it
    register("broken.example.com"); // which is the first to see this socket
    releaseFirst.countDown();

    assertThat(next).failsWithin(Duration.ofSeconds(10)).withThrowableThat()
        .havingCause().isInstanceOf(IllegalStateException.class)
        .withMessage("the registration watcher of " + folders.registry + " is stopped");
  }

  @Test
  void theWaitersOfAScanThatCloseCutsShortFail() throws Exception {
    CountDownLatch firstEntered = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    CountDownLatch secondEntered = new CountDownLatch(1);
    RegistrationWatcher watcher = folders.startWatcher(Duration.ofSeconds(2), (driver, socket) -> {
      if (driver.driverName().equals("second.example.com")) {
        secondEntered.countDown();
        awaitOrInterrupt(new CountDownLatch(1)); // until close() interrupts the scan
      } else {
        firstEntered.countDown();
        awaitOrInterrupt(releaseFirst);
      }
      return () -> { };
    });
    register("first.example.com");
    assertThat(firstEntered.await(10, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<Void> next = watcher.nextScan(); // waits on the scan after this one
    register("second.example.com");
    releaseFirst.countDown();
    assertThat(secondEntered.await(10, TimeUnit.SECONDS)).isTrue(); // that scan is in progress

    watcher.close();

    assertThat(next).isCompletedExceptionally();
    assertThat(watcher.nextScan()).isCompletedExceptionally();
  }
}
