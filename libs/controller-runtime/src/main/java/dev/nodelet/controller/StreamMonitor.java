package dev.nodelet.controller;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows one stream of one source, as the kubelet follows a DRA plugin's {@code ListAndWatchResources} and
 * {@code NodeWatchResources}: opens the stream, opens it again after the {@link Backoff} when it fails retryably,
 * stops on a non-retryable failure or on a clean end, and ignores the callbacks of an earlier attempt or of a stopped
 * monitor. {@link #stop()} leaves no subscription and no timer behind.
 *
 * <p>A dead source fails every attempt: the first failure after the stream last delivered is one WARN line, the
 * ones after it one DEBUG line each, the stack trace at DEBUG only, and one INFO line once it delivers again.
 *
 * <p>The consumer never sees a stale callback: it opens the stream with the {@link Attempt} it is given and passes
 * every callback of that stream through it ({@link Attempt#delivered()}, {@link Attempt#failed},
 * {@link Attempt#completed()}). {@link Events} are called without the monitor's lock held.
 */
public final class StreamMonitor {

  private static final Logger LOG = LoggerFactory.getLogger(StreamMonitor.class);

  /** What the monitor does now. */
  public enum State {
    /** A stream is open (or being opened). */
    FOLLOWING,
    /** The stream failed and a retry waits. */
    BACKING_OFF,
    /** Stopped: by {@link #stop()}, a non-retryable failure or a clean end. */
    STOPPED
  }

  /** Opens one attempt of the stream; must not block. */
  @FunctionalInterface
  public interface Source {
    /**
     * @param attempt the attempt every callback of the new stream goes through
     * @return the handle that ends the stream, or {@code null} when there is none to close
     * @throws RuntimeException a failure to open, handled as a retryable failure of the stream
     */
    AutoCloseable open(Attempt attempt);
  }

  /** The end of a stream, for the consumer; the monitor logs it already. */
  public interface Events {
    /**
     * The current stream failed; called before the retry is scheduled, so that the error cannot outlive the
     * retry's first delivery.
     *
     * @param retryable {@code true} when the monitor opens the stream again after its back-off (unless its
     *     scheduler turns the retry down because the scheduler's owner is closing), {@code false} when it stopped
     */
    void failed(StreamMonitor monitor, Throwable cause, boolean retryable);

    /** The current stream ended cleanly; the monitor stopped. */
    void ended(StreamMonitor monitor);
  }

  private final String name;
  private final String stream;
  private final Source source;
  private final Events events;
  private final Scheduler scheduler;
  private final Backoff backoff;
  private final boolean firstRetryAtOnce;
  private final Object lock = new Object();
  private int attempt; // guarded by lock: the number of the current attempt
  private boolean stopped; // guarded by lock
  private AutoCloseable handle; // guarded by lock: the current stream's
  private Scheduler.Task retry; // guarded by lock
  private Duration retryDelay; // guarded by lock: the delay of the pending retry, null when none is pending
  private int failuresInARow; // guarded by lock: retryable failures since the stream last delivered

  private StreamMonitor(Builder b) {
    this.name = b.name;
    this.stream = b.stream;
    this.source = b.source;
    this.events = b.events;
    this.scheduler = b.scheduler;
    this.backoff = b.backoff;
    this.firstRetryAtOnce = b.firstRetryAtOnce;
  }

  /**
   * Starts configuring a monitor.
   *
   * @param name the name of what is followed, e.g. a driver name; for the consumer, see {@link #name()}
   * @param stream the stream in log lines, e.g. {@code "snapshot stream of DRA driver gpu.example.com"}
   */
  public static Builder builder(String name, String stream, Source source, Scheduler scheduler) {
    return new Builder(name, stream, source, scheduler);
  }

  /** The name given to the builder. */
  public String name() {
    return name;
  }

  public State state() {
    synchronized (lock) {
      return stopped ? State.STOPPED : retryDelay != null ? State.BACKING_OFF : State.FOLLOWING;
    }
  }

  /** The delay of the pending retry, or else that of the last failure (zero without one, or once forgotten). */
  public Duration backoff() {
    synchronized (lock) {
      return retryDelay != null ? retryDelay : backoff.delay(scheduler.nanoTime());
    }
  }

  /** Opens the stream on the calling thread (the source must not block). */
  public void start() {
    LOG.info("Following the {}", stream);
    open();
  }

  /** Ends the stream and any pending retry; nothing is reported after this. Idempotent. */
  public void stop() {
    AutoCloseable open;
    synchronized (lock) {
      if (stopped) {
        return;
      }
      stopped = true;
      open = handle;
      handle = null;
      if (retry != null) {
        retry.cancel();
      }
      retryDelay = null;
    }
    closeQuietly(open);
    LOG.info("Stopped following the {}", stream);
  }

  private void open() {
    Attempt current;
    synchronized (lock) {
      retryDelay = null;
      if (stopped) {
        return;
      }
      current = new Attempt(++attempt);
    }
    AutoCloseable opened;
    try {
      opened = source.open(current);
    } catch (RuntimeException e) {
      current.failed(e, true);
      return;
    }
    synchronized (lock) {
      // the stream may have ended inside open already, or the monitor been stopped meanwhile
      if (current.isCurrent()) {
        handle = opened;
        return;
      }
    }
    closeQuietly(opened);
  }

  private void closeQuietly(AutoCloseable open) {
    if (open == null) {
      return;
    }
    try {
      open.close();
    } catch (Exception e) {
      LOG.warn("Closing the {} failed", stream, e);
    }
  }

  /** One attempt of the stream; its callbacks count only while it is the current one. */
  public final class Attempt {
    private final int number;
    private boolean ended; // guarded by lock

    private Attempt(int number) {
      this.number = number;
    }

    /** The monitor of this attempt. */
    public StreamMonitor monitor() {
      return StreamMonitor.this;
    }

    /** True while this attempt's stream is the one followed. */
    public boolean isCurrent() {
      synchronized (lock) {
        return !stopped && !ended && attempt == number;
      }
    }

    /**
     * The stream delivered an item. Call it before handing the item on.
     *
     * @return {@code true} to hand the item on; {@code false} for a stale attempt, whose item is dropped
     */
    public boolean delivered() {
      int failedBefore;
      synchronized (lock) {
        if (!isCurrent()) {
          return false;
        }
        failedBefore = failuresInARow;
        failuresInARow = 0;
      }
      if (failedBefore > 0) {
        LOG.info("The {} works again after {} failed attempts", stream, failedBefore);
      }
      return true;
    }

    /** The stream failed; a retryable failure opens it again after the back-off, another stops the monitor. */
    public void failed(Throwable cause, boolean retryable) {
      if (!isCurrent()) {
        return;
      }
      events.failed(StreamMonitor.this, cause, retryable);
      AutoCloseable open;
      Duration delay = null;
      int failures = 0;
      synchronized (lock) {
        if (!isCurrent()) {
          return; // stopped meanwhile
        }
        ended = true;
        open = handle;
        handle = null;
        if (retryable) {
          long now = scheduler.nanoTime();
          Duration before = backoff.delay(now);
          Duration next = backoff.failed(now);
          delay = firstRetryAtOnce ? before : next; // the kubelet retries a plugin's first failure at once
          try {
            retry = scheduler.schedule(StreamMonitor.this::open, delay);
            retryDelay = delay;
            failures = ++failuresInARow;
          } catch (RejectedExecutionException e) {
            stopped = true; // the scheduler is closing: so is the monitor's owner
            delay = null;
          }
        } else {
          stopped = true;
        }
      }
      closeQuietly(open);
      if (delay != null) {
        logFailure(cause, failures, delay);
      } else if (retryable) {
        LOG.debug("The {} failed while its scheduler closes; not retried", stream, cause);
      } else {
        LOG.info("The {} is not served ({}); it is not followed again until its source registers again", stream,
            why(cause));
      }
    }

    /** The stream ended cleanly: the monitor stops. */
    public void completed() {
      AutoCloseable open;
      synchronized (lock) {
        if (!isCurrent()) {
          return;
        }
        ended = true;
        stopped = true;
        open = handle;
        handle = null;
      }
      closeQuietly(open);
      LOG.info("The {} ended; it is not followed again until its source registers again", stream);
      events.ended(StreamMonitor.this);
    }
  }

  private void logFailure(Throwable cause, int failures, Duration delay) {
    if (failures == 1) {
      LOG.warn("The {} failed: {}; subscribing again in {} ms (further failures until it delivers again are logged"
          + " at DEBUG)", stream, why(cause), delay.toMillis());
      LOG.debug("The {} failed", stream, cause);
    } else {
      LOG.debug("The {} failed again ({} attempts in a row): {}; subscribing again in {} ms", stream, failures,
          why(cause), delay.toMillis(), cause);
    }
  }

  private static String why(Throwable cause) {
    return cause.getMessage() == null ? cause.toString() : cause.getMessage();
  }

  /** Configures a {@link StreamMonitor}. */
  public static final class Builder {
    private final String name;
    private final String stream;
    private final Source source;
    private final Scheduler scheduler;
    private Events events = new Events() {
      @Override
      public void failed(StreamMonitor monitor, Throwable cause, boolean retryable) {
      }

      @Override
      public void ended(StreamMonitor monitor) {
      }
    };
    private Backoff backoff = Backoff.exponential(Duration.ofSeconds(5), Duration.ofSeconds(5)).build();
    private boolean firstRetryAtOnce;

    private Builder(String name, String stream, Source source, Scheduler scheduler) {
      this.name = Objects.requireNonNull(name, "name");
      this.stream = Objects.requireNonNull(stream, "stream");
      this.source = Objects.requireNonNull(source, "source");
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    }

    /** Where the failures and the end of the stream go; none by default. */
    public Builder events(Events events) {
      this.events = Objects.requireNonNull(events, "events");
      return this;
    }

    /** The delays between attempts; by default 5 s each, the kubelet's health retry. */
    public Builder backoff(Backoff backoff) {
      this.backoff = Objects.requireNonNull(backoff, "backoff");
      return this;
    }

    /**
     * The first failure after a success is retried at once and each further one after the delay of the one before
     * it, as the kubelet monitors a plugin's resources; by default every failure waits its own delay.
     */
    public Builder firstRetryAtOnce() {
      this.firstRetryAtOnce = true;
      return this;
    }

    public StreamMonitor build() {
      return new StreamMonitor(this);
    }
  }
}
