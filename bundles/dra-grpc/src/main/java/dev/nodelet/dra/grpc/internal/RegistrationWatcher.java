package dev.nodelet.dra.grpc.internal;

import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.grpc.internal.SocketFiles.FileId;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the registration folder on one thread and keeps one published {@link RegisteredDriver} per registration
 * socket that passed the handshake, like the kubelet's plugin watcher.
 *
 * <p>The folder is polled rather than watched through inotify: a poll also sees a changed mode (a socket or the
 * folder made loose, or fixed) and a socket replaced under the same name by a restarted driver (a new inode),
 * and it needs no thread besides this one. A replaced socket registers again; the new driver is published before the
 * old one is withdrawn, so the controller never sees the driver gone. Files whose name starts with {@code .} are
 * ignored, so a driver can bind a socket under such a name, restrict its mode and then rename it into place.
 *
 * <p>Every socket that did not register, and a folder that cannot be used, is kept as a failed registration with its
 * reason ({@link #failedRegistrations()}) until the socket registers or goes away.
 */
final class RegistrationWatcher implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(RegistrationWatcher.class);
  private static final Duration MAX_RETRY_DELAY = Duration.ofSeconds(30);

  /** Publishes a registered driver (as an OSGi service); the returned action withdraws it. */
  @FunctionalInterface
  interface Publisher {
    Runnable publish(RegisteredDriver driver, Path registrationSocket);
  }

  /**
   * One socket file and what became of it; only the watcher thread touches these.
   *
   * @param driver null unless registered
   * @param unpublish null unless registered
   * @param retryAtNanos {@code Long.MAX_VALUE}: only a new file or mode tries again
   * @param failure why the socket is not registered; null when it is
   */
  private record Entry(FileId id, RegisteredDriver driver, Runnable unpublish, long retryAtNanos,
      Duration retryDelay, DriverStatus failure) {

    /** A socket that did not register, named by the driver's name if it told one, else by the socket's. */
    static Entry failed(FileId id, long retryAtNanos, Duration retryDelay, String name, String reason) {
      return new Entry(id, null, null, retryAtNanos, retryDelay, new DriverStatus(name,
          DriverStatus.State.NOT_REGISTERED, Optional.empty(), Optional.of(reason),
          retryDelay == null ? Duration.ZERO : retryDelay, Duration.ZERO));
    }

    void withdraw() {
      if (unpublish != null) {
        unpublish.run();
      }
    }
  }

  private final Path folder;
  private final Duration pollInterval;
  private final Duration withdrawUnreachableAfter;
  private final Registrar registrar;
  private final Publisher publisher;
  private final CountDownLatch closing = new CountDownLatch(1);
  private final Thread thread;
  private final Map<Path, Entry> entries = new HashMap<>();
  /** The failures of {@link #entries}, for other threads. */
  private final Map<Path, DriverStatus> failures = new ConcurrentHashMap<>();
  private volatile String folderProblem = "";
  /** Why creating the missing folder failed, or null while it has not failed (watch thread only). */
  private String createFailure;
  private volatile String crash; // why the thread ended early, or null
  private volatile long scans; // written by the watcher thread only
  /** Completed by the end of the first scan that starts after they were asked for. */
  private final ConcurrentLinkedQueue<CompletableFuture<Void>> scanWaiters = new ConcurrentLinkedQueue<>();

  /** A watcher that never withdraws a registered driver for being unreachable. */
  RegistrationWatcher(Path folder, Duration pollInterval, Registrar registrar, Publisher publisher) {
    this(folder, pollInterval, Duration.ZERO, registrar, publisher);
  }

  /**
   * @param withdrawUnreachableAfter a registered driver whose streams have failed for this long without a snapshot
   *     is withdrawn until its registration socket is created again; zero for never
   */
  RegistrationWatcher(Path folder, Duration pollInterval, Duration withdrawUnreachableAfter, Registrar registrar,
      Publisher publisher) {
    this.folder = folder;
    this.pollInterval = pollInterval;
    this.withdrawUnreachableAfter = withdrawUnreachableAfter;
    this.registrar = registrar;
    this.publisher = publisher;
    this.thread = new Thread(this::run, Transport.THREAD_PREFIX + "-watcher");
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /**
   * How many scans of the folder have ended; a scan that ends after this call has seen every change made before it,
   * so tests wait for two more instead of sleeping.
   */
  long scans() {
    return scans;
  }

  /**
   * Completes once a scan that starts after this call has ended, so it has seen every change made to the folder
   * before the call; fails with {@link IllegalStateException} once the watcher is stopped.
   */
  CompletableFuture<Void> nextScan() {
    CompletableFuture<Void> next = new CompletableFuture<>();
    scanWaiters.add(next);
    if (closing.getCount() == 0) { // stopped, or stopping: its last scan may already be over
      failWaiters();
    }
    return next;
  }

  private void failWaiters() {
    for (CompletableFuture<Void> f; (f = scanWaiters.poll()) != null; ) {
      f.completeExceptionally(new IllegalStateException("the registration watcher of " + folder + " is stopped"));
    }
  }

  /** The sockets that did not register and why, then the folder's problem if it has one; never blocks. */
  List<DriverStatus> failedRegistrations() {
    List<DriverStatus> failed = new ArrayList<>(new TreeMap<>(failures).values());
    String problem = crash != null ? crash : folderProblem;
    if (problem != null && !problem.isEmpty()) {
      failed.add(new DriverStatus(folder.toString(), DriverStatus.State.NOT_REGISTERED, Optional.empty(),
          Optional.of(problem), Duration.ZERO, Duration.ZERO));
    }
    return failed;
  }

  /** Stops the thread and withdraws every published driver. */
  @Override
  public void close() {
    closing.countDown();
    thread.interrupt(); // ends a handshake in progress at once
    try {
      thread.join(TimeUnit.SECONDS.toMillis(10));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive()) {
      LOG.warn("The registration watcher of {} did not stop within 10 s", folder);
    }
    failWaiters(); // also those of a watcher never started
  }

  private void run() {
    LOG.info("Watching {} for DRA driver registration sockets", folder);
    // the waiters of the scan in progress: failed with the queued ones if the scan throws or is cut short
    List<CompletableFuture<Void>> waiting = new ArrayList<>();
    try {
      do {
        for (CompletableFuture<Void> f; (f = scanWaiters.poll()) != null; ) {
          waiting.add(f);
        }
        scan();
        scans++;
        if (closing.getCount() == 0) {
          break; // close() came during the scan: what it did is being withdrawn, so its waiters fail
        }
        waiting.forEach(f -> f.complete(null));
        waiting.clear();
      } while (!closing.await(pollInterval.toMillis(), TimeUnit.MILLISECONDS));
    } catch (InterruptedException e) {
      // close() asked us to stop
    } catch (RuntimeException | Error e) {
      LOG.error("The registration watcher of {} failed; no driver registers until the component restarts", folder, e);
      crash = "the registration watcher of " + folder + " failed (" + e + "); no driver registers until the"
          + " component restarts (restart the bundle nodelet-dra-grpc, or change configuration"
          + " dev.nodelet.dra.grpc)";
    } finally {
      entries.values().forEach(RegistrationWatcher::withdrawQuietly);
      entries.clear();
      failures.clear();
      folderProblem = "";
      closing.countDown(); // a crash ends the watch as close() does: nobody waits for a scan that never comes
      scanWaiters.addAll(waiting);
      failWaiters();
      LOG.info("Stopped watching {}", folder);
    }
  }

  private void scan() {
    Map<Path, FileId> sockets = sockets();
    for (Iterator<Map.Entry<Path, Entry>> it = entries.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<Path, Entry> e = it.next();
      if (!sockets.containsKey(e.getKey())) {
        it.remove();
        failures.remove(e.getKey());
        if (e.getValue().unpublish() != null) {
          LOG.info("Registration socket {} is gone; its DRA driver is withdrawn", e.getKey());
        }
        withdrawQuietly(e.getValue());
      }
    }
    for (Map.Entry<Path, FileId> s : sockets.entrySet()) {
      if (closing.getCount() == 0) {
        return;
      }
      Entry previous = entries.get(s.getKey());
      boolean sameFile = previous != null && previous.id().equals(s.getValue());
      if (sameFile && unreachableTooLong(previous)) {
        LOG.warn("DRA driver {} has been unreachable at {} for {} s: it is withdrawn, and its ResourceSlices are"
            + " deleted after the controller's grace period; it registers again when {} is created again",
            previous.driver().driverName(), previous.driver().endpoint(),
            previous.driver().unreachableFor(System.nanoTime()).toSeconds(), s.getKey());
        withdrawQuietly(previous);
        put(s.getKey(), Entry.failed(previous.id(), Long.MAX_VALUE, null, previous.driver().driverName(),
            "unreachable at " + previous.driver().endpoint() + " for "
            + previous.driver().unreachableFor(System.nanoTime()).toSeconds() + " s, so it was withdrawn; it"
            + " registers again when " + s.getKey() + " is created again"));
        continue;
      }
      if (sameFile && System.nanoTime() < previous.retryAtNanos()) {
        continue;
      }
      put(s.getKey(), attempt(s.getKey(), s.getValue(), sameFile ? previous : null));
      if (previous != null) {
        withdrawQuietly(previous); // after the replacement is published: no gap
      }
    }
  }

  private void put(Path socket, Entry entry) {
    entries.put(socket, entry);
    if (entry.failure() == null) {
      failures.remove(socket);
    } else {
      failures.put(socket, entry.failure());
    }
  }

  /** The sockets in the folder, or none while the folder is missing or loose. */
  private Map<Path, FileId> sockets() {
    Map<Path, FileId> sockets = new TreeMap<>();
    String problem;
    try {
      int mode = SocketFiles.mode(folder);
      if (mode == -1 && createFailure == null) {
        mode = create();
      }
      problem = SocketFiles.folderProblem(folder, mode);
      if (mode == -1 && createFailure != null) {
        problem += " (it could not be created: " + createFailure + ")";
      }
      if (problem == null) {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(folder)) {
          for (Path file : files) {
            FileId id = file.getFileName().toString().startsWith(".") ? null : SocketFiles.id(file);
            if (id != null && SocketFiles.isSocket(id.mode())) {
              sockets.put(file, id);
            }
          }
        }
      }
    } catch (IOException e) {
      problem = "cannot read registration folder " + folder + ": " + e;
      sockets.clear();
    }
    if (!Objects.equals(problem, folderProblem)) {
      if (problem != null) {
        LOG.error("{}", problem);
      } else if (!folderProblem.isEmpty()) {
        LOG.info("Registration folder {} is usable again", folder);
      }
      folderProblem = problem;
    }
    return sockets;
  }

  /**
   * Creates the missing folder with mode 0700, as the kubelet creates its own registration folder, so that drivers
   * can register on a fresh node. Not tried again after a failure: that folder is reported, and used once someone
   * else creates it.
   *
   * @return the folder's mode, -1 if it could not be created
   */
  private int create() throws IOException {
    try {
      Files.createDirectories(folder, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(
          "rwx------")));
      LOG.info("Created the registration folder {} (mode 0700)", folder);
      return SocketFiles.mode(folder);
    } catch (IOException | UnsupportedOperationException e) {
      createFailure = e.getClass().getSimpleName() + ": " + e.getMessage();
      return -1;
    }
  }

  private Entry attempt(Path socket, FileId id, Entry failedBefore) {
    String problem = SocketFiles.socketProblem("registration socket", socket, id.mode());
    String name = socket.getFileName().toString();
    if (problem != null) {
      LOG.error("{}; the driver is not registered", problem);
      return Entry.failed(id, Long.MAX_VALUE, null, name, problem + "; the driver is not registered");
    }
    try {
      RegisteredDriver driver = registrar.register(socket);
      Runnable unpublish;
      try {
        unpublish = publisher.publish(driver, socket);
      } catch (RuntimeException e) {
        // the listener's fault, not the watch's: this driver stays unregistered, the others go on
        driver.close();
        String refused = "the listener refused DRA driver " + driver.driverName() + ": " + e;
        LOG.error("{} (registration socket {}); it is not registered until its socket is replaced", refused,
            socket, e);
        return Entry.failed(id, Long.MAX_VALUE, null, driver.driverName(), refused);
      } catch (Error e) {
        driver.close();
        throw e;
      }
      LOG.info("Registered DRA driver {} from {} (endpoint {}, {})", driver.driverName(), socket, driver.endpoint(),
          driver.protocol());
      return new Entry(id, driver, () -> {
        try {
          unpublish.run();
        } finally {
          driver.close();
        }
      }, Long.MAX_VALUE, null, null);
    } catch (Registrar.TransportException e) {
      // as a refusal: the same transport gives the same answer, so only a new socket or mode tries again
      LOG.error("Cannot dial registration socket {}: {}", socket, e.getMessage());
      return Entry.failed(id, Long.MAX_VALUE, null, name, "cannot dial registration socket " + socket + ": "
          + e.getMessage() + "; it is tried again when the socket is replaced");
    } catch (Registrar.RefusedException e) {
      LOG.error("DRA driver registration refused: {}", e.getMessage());
      return Entry.failed(id, Long.MAX_VALUE, null, e.driverName().isEmpty() ? name : e.driverName(),
          "registration refused: " + e.getMessage());
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() == Status.Code.UNIMPLEMENTED) {
        String ignored = "socket " + socket + " does not serve pluginregistration.Registration; it is ignored until"
            + " it is replaced";
        LOG.error("{}", ignored);
        return Entry.failed(id, Long.MAX_VALUE, null, name, ignored);
      }
      // a stale socket of a dead driver, or one that has bound but not yet listens: try again, less and less often
      Duration delay = failedBefore == null || failedBefore.retryDelay() == null ? pollInterval
          : min(failedBefore.retryDelay().multipliedBy(2), MAX_RETRY_DELAY);
      if (failedBefore == null) {
        LOG.warn("Registration socket {} did not answer ({}); trying again until it does", socket,
            GrpcDraDriver.describe(e.getStatus()));
      } else {
        LOG.debug("Registration socket {} did not answer ({}); next try in {} ms", socket,
            GrpcDraDriver.describe(e.getStatus()),
            delay.toMillis());
      }
      return Entry.failed(id, System.nanoTime() + delay.toNanos(), delay, name, "registration socket " + socket
          + " did not answer (" + GrpcDraDriver.describe(e.getStatus()) + "); next try in " + delay.toMillis()
          + " ms, then less and less often");
    }
  }

  private boolean unreachableTooLong(Entry entry) {
    return entry.driver() != null && !withdrawUnreachableAfter.isZero()
        && entry.driver().unreachableFor(System.nanoTime()).compareTo(withdrawUnreachableAfter) >= 0;
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  private static void withdrawQuietly(Entry entry) {
    try {
      entry.withdraw();
    } catch (RuntimeException e) {
      LOG.warn("Withdrawing a DRA driver failed", e);
    }
  }
}
