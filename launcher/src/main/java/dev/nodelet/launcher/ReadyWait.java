package dev.nodelet.launcher;

import java.io.PrintStream;
import java.util.concurrent.TimeUnit;

/**
 * The launcher's wait for readiness, and the lines that say what it waits for. It ends when Nodelet is ready, when the
 * framework stops, or at the time limit: {@code --ready-timeout}, else {@link #DEFAULT_SECONDS}, except that with
 * persistence on the default is no limit at all, since Nodelet serves the objects stored on disk while the API server
 * is away, for as long as it is away, and a node restarting in a loop would serve nothing between attempts.
 */
final class ReadyWait {

  /**
   * The time limit when {@code --ready-timeout} is not given and persistence is off: 60 s (the system property
   * {@code nodelet.ready.default.seconds} shortens it for tests that outlast it).
   */
  static final int DEFAULT_SECONDS = Integer.getInteger("nodelet.ready.default.seconds", 60);

  /** What is waited for: the framework's readiness. */
  interface Target {
    /** @param probe whether to ask the API server for the node when it is missing (at most every 2 s) */
    NodeletFramework.Status status(boolean probe);

    /** Whether the framework still runs; the wait ends when it stops. */
    boolean running();

    /** Whether a store strategy keeps its objects on disk ({@code persistence.dir} set). */
    boolean persistence();
  }

  /** The time, and a pause between two looks; a test drives both. */
  interface Clock {
    long nanoTime();

    void sleep(long millis) throws InterruptedException;
  }

  static final Clock SYSTEM = new Clock() {
    @Override
    public long nanoTime() {
      return System.nanoTime();
    }

    @Override
    public void sleep(long millis) throws InterruptedException {
      Thread.sleep(millis);
    }
  };

  private final int timeoutSeconds;
  private final Clock clock;
  private final PrintStream out;

  /**
   * @param timeoutSeconds {@code --ready-timeout}: seconds, 0 for no limit, {@link Options#DEFAULT_READY} when not
   *     given
   */
  ReadyWait(int timeoutSeconds, Clock clock, PrintStream out) {
    this.timeoutSeconds = timeoutSeconds;
    this.clock = clock;
    this.out = out;
  }

  /**
   * Waits; returns the last status, ready or not (not ready: the time limit passed or the framework stopped).
   *
   * <p>After five seconds a line says what readiness waits for, again whenever that changes, and again while it
   * stays the same: every 10 s during the first minute, then every 5 minutes (a node can wait for days).
   */
  NodeletFramework.Status await(Target target) throws InterruptedException {
    long start = clock.nanoTime();
    String said = "";
    long saidAt = 0;
    boolean readyBefore = false;
    boolean unlimited = timeoutSeconds == 0;
    while (true) {
      long elapsed = clock.nanoTime() - start;
      NodeletFramework.Status status = target.status(elapsed > TimeUnit.SECONDS.toNanos(3));
      // the executor runs the checks in parallel, so one pass can see the pods handed to the managers after the
      // cache-sync check looked at the managers: ready means ready on two passes in a row
      if (status.ready() && readyBefore || !target.running()) {
        return status;
      }
      readyBefore = status.ready();
      boolean firstMinute = elapsed < TimeUnit.SECONDS.toNanos(60);
      long sinceSaid = elapsed - saidAt;
      boolean changed = !status.missing().equals(said);
      if (elapsed > TimeUnit.SECONDS.toNanos(5) && !status.ready()
          && (changed && (firstMinute || sinceSaid >= TimeUnit.SECONDS.toNanos(10))
          || sinceSaid >= TimeUnit.SECONDS.toNanos(firstMinute ? 10 : 300))) {
        said = status.missing();
        saidAt = elapsed;
        out.println("Nodelet waiting: " + said + " (" + TimeUnit.NANOSECONDS.toSeconds(elapsed) + " s)");
      }
      int limit = timeoutSeconds == Options.DEFAULT_READY ? DEFAULT_SECONDS : timeoutSeconds;
      if (!unlimited && elapsed >= TimeUnit.SECONDS.toNanos(limit)) {
        if (timeoutSeconds != Options.DEFAULT_READY || !target.persistence()) {
          return status;
        }
        unlimited = true;
        out.println("Nodelet not ready after " + limit + " s; persistence is on, so it serves the objects stored on"
            + " disk meanwhile and waits without a time limit (--ready-timeout SECONDS sets one)");
      }
      clock.sleep(100);
    }
  }
}
