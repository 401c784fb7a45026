package dev.nodelet.dra.grpc;

import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.grpc.internal.PluginWatch;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Watches a registration folder for the sockets of DRA drivers and registers them as the kubelet's plugin watcher
 * does; plain Java, so that a driver's registration can be tested without OSGi. Build it with {@link #builder},
 * {@link #start} it with a listener, {@link #close()} it.
 *
 * <p>The registration rules:
 * <ul>
 *   <li>The folder must be a directory of mode 0700 or stricter, each socket a unix socket of mode 0600 or stricter
 *       (links are not followed). Files whose name starts with {@code .} are ignored, so a driver can bind under
 *       such a name, restrict the mode and rename the socket into place; any other name registers
 *       ({@code <driver>-reg.sock} by convention).</li>
 *   <li>The folder is polled every {@link Builder#pollInterval poll interval}. For each new socket, Nodelet calls
 *       {@code GetInfo} and requires type {@code DRAPlugin}, a name that is a DNS subdomain of at most 63
 *       characters, one of {@link RegisteredPlugin#DRA_V1}, {@link RegisteredPlugin#DRA_V1BETA1} or
 *       {@link RegisteredPlugin#NODELET_V1} in {@code supported_versions} (the first of those, in that order, is
 *       used), and an endpoint that is empty (the registration socket serves) or the normalized absolute path of at
 *       most 107 bytes of a socket of mode 0600. It then calls {@code NotifyRegistrationStatus} with the verdict.</li>
 *   <li>A refused driver is listed by {@link #failedRegistrations()} with the reason, and not asked again until its
 *       socket is replaced or its mode changes. A socket that does not answer is tried again at doubling intervals
 *       up to 30 s; one that does not serve the registration service is ignored until replaced. So is a socket
 *       that cannot be dialled at all (Netty's epoll transport is not available here: the reason names its
 *       cause), and a driver whose {@link PluginListener#registered} threw a {@link RuntimeException}.</li>
 *   <li>A socket replaced under the same name (a restarted driver binds a new file) registers again: the new
 *       registration is handed to the listener before the old one is withdrawn. A socket that goes away withdraws
 *       its registration. Two sockets that name the same driver are two registrations; whoever consumes them calls
 *       the newest (as the claim manager and the slice controller do).</li>
 *   <li>A registered driver whose snapshot stream has failed for {@link Builder#withdrawUnreachableAfter} is
 *       withdrawn and listed as failed until its socket is created again.</li>
 * </ul>
 *
 * @since 1.0
 */
public final class PluginWatcher implements AutoCloseable {

  /** The shortest poll interval. */
  public static final Duration MIN_POLL_INTERVAL = Duration.ofMillis(10);
  /** The most event loop threads. */
  public static final int MAX_IO_THREADS = 64;
  /** The kubelet's deadline of a prepare or unprepare call, used for a call timeout of zero. */
  public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(45);

  /** The settings of a watcher; {@link #builder} has the defaults. */
  public static final class Builder {
    private final Path folder;
    private Duration pollInterval = Duration.ofMillis(500);
    private Duration handshakeTimeout = Duration.ofSeconds(5);
    private Duration callTimeout = DEFAULT_CALL_TIMEOUT;
    private Duration withdrawUnreachableAfter = Duration.ofSeconds(30);
    private int ioThreads = 1;

    private Builder(Path folder) {
      this.folder = Objects.requireNonNull(folder, "folder");
    }

    /** How often the folder is checked for new, replaced and removed sockets; default 500 ms (a restarted driver is seen within it), at least 10 ms. */
    public Builder pollInterval(Duration interval) {
      if (interval == null || interval.compareTo(MIN_POLL_INTERVAL) < 0) {
        throw new IllegalArgumentException("pollInterval must be at least " + MIN_POLL_INTERVAL.toMillis()
            + " ms, was " + interval);
      }
      this.pollInterval = interval;
      return this;
    }

    /** The deadline of {@code GetInfo} and {@code NotifyRegistrationStatus}; default 5 s. */
    public Builder handshakeTimeout(Duration timeout) {
      if (timeout == null || timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("handshakeTimeout must be a positive duration, was " + timeout);
      }
      this.handshakeTimeout = timeout;
      return this;
    }

    /**
     * The deadline of each {@code NodePrepareResources} and {@code NodeUnprepareResources} call; default and for
     * {@link Duration#ZERO} the kubelet's 45 s.
     */
    public Builder callTimeout(Duration timeout) {
      if (timeout == null || timeout.isNegative()) {
        throw new IllegalArgumentException("callTimeout must be zero (the kubelet's 45 s) or positive, was "
            + timeout);
      }
      this.callTimeout = timeout.isZero() ? DEFAULT_CALL_TIMEOUT : timeout;
      return this;
    }

    /**
     * A registered streaming driver whose stream has failed for this long without a snapshot is withdrawn until
     * its socket is created again; default 30 s, {@link Duration#ZERO} for never.
     */
    public Builder withdrawUnreachableAfter(Duration after) {
      if (after == null || after.isNegative()) {
        throw new IllegalArgumentException("withdrawUnreachableAfter must be zero (never) or positive, was " + after);
      }
      this.withdrawUnreachableAfter = after;
      return this;
    }

    /** Event loop threads shared by every driver connection; default 1, at most 64. */
    public Builder ioThreads(int threads) {
      if (threads < 1 || threads > MAX_IO_THREADS) {
        throw new IllegalArgumentException("ioThreads must be between 1 and " + MAX_IO_THREADS + ", was " + threads);
      }
      this.ioThreads = threads;
      return this;
    }

    /** @return the call timeout in force (zero given: the kubelet's 45 s) */
    public Duration callTimeout() {
      return callTimeout;
    }

    /** @return a watcher, not started: no thread or connection until {@link PluginWatcher#start} */
    public PluginWatcher build() {
      return new PluginWatcher(this);
    }
  }

  /** Starts building a watcher of {@code registrationFolder}. */
  public static Builder builder(Path registrationFolder) {
    return new Builder(registrationFolder);
  }

  private final Builder settings;
  private volatile PluginWatch watch; // written under this
  private boolean closed; // guarded by this

  private PluginWatcher(Builder b) {
    Builder copy = new Builder(b.folder);
    copy.pollInterval = b.pollInterval;
    copy.handshakeTimeout = b.handshakeTimeout;
    copy.callTimeout = b.callTimeout;
    copy.withdrawUnreachableAfter = b.withdrawUnreachableAfter;
    copy.ioThreads = b.ioThreads;
    this.settings = copy;
  }

  /**
   * Starts the watcher thread and the connections' event loop; returns at once.
   *
   * @param listener receives every registration
   * @throws IllegalStateException when started before, or closed
   */
  public synchronized void start(PluginListener listener) {
    Objects.requireNonNull(listener, "listener");
    if (closed || watch != null) {
      throw new IllegalStateException(closed ? "the plugin watcher of " + settings.folder + " is closed"
          : "the plugin watcher of " + settings.folder + " is started already");
    }
    PluginWatch next = new PluginWatch(settings.folder, settings.pollInterval, settings.handshakeTimeout,
        settings.callTimeout, settings.withdrawUnreachableAfter, settings.ioThreads, listener);
    watch = next; // first: the listener, called from the first scan on, may ask for nextScan or the failures
    try {
      next.start();
    } catch (RuntimeException | Error e) {
      watch = null;
      next.close();
      throw e;
    }
  }

  /** @return the folder watched */
  public Path folder() {
    return settings.folder;
  }

  /**
   * Every socket that did not register and why, then the folder's problem if it has one, each in state
   * {@link DriverStatus.State#NOT_REGISTERED} with the reason (and what to do) as its last error and, for a socket
   * that does not answer, the delay before the next try as its backoff. The name is the one the driver gave, else the
   * socket's file name (the folder's path for a folder problem). Never blocks.
   *
   * @return the failures, ordered by socket; empty before the start and after the close
   */
  public List<DriverStatus> failedRegistrations() {
    PluginWatch current = watch;
    return current == null ? List.of() : current.failedRegistrations();
  }

  /**
   * For tests: completes once a scan of the folder that starts after this call has ended, so every change made to
   * the folder before the call has been acted on (registrations handed to the listener, failures listed).
   *
   * @return the future; it fails with {@link IllegalStateException} once the watcher is closed
   */
  public CompletableFuture<Void> nextScan() {
    PluginWatch current = watch;
    if (current == null) {
      return CompletableFuture.failedFuture(new IllegalStateException("the plugin watcher of " + settings.folder
          + " is not running"));
    }
    return current.nextScan();
  }

  /**
   * Withdraws every registration (running the listener's actions), closes every connection and ends every thread.
   */
  @Override
  public synchronized void close() {
    closed = true;
    PluginWatch current = watch;
    watch = null;
    if (current != null) {
      current.close();
    }
  }

  @Override
  public String toString() {
    return "plugin watcher of " + settings.folder;
  }
}
