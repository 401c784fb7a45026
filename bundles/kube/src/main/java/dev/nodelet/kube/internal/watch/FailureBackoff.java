package dev.nodelet.kube.internal.watch;

import dev.nodelet.kube.watch.ReflectorException;
import org.slf4j.Logger;

/**
 * A reflector's run of failures: how it is logged (a warning for the first reflector to fail in an engine's
 * {@link Engine#WARNING_INTERVAL}, DEBUG for the others and for every later failure) and the backoff before its next
 * attempt, exponential with jitter. Used on the reflector's serial executor only.
 */
final class FailureBackoff {

  private final Engine engine;
  private int failures;
  private boolean failing;
  /** Whether this failure period was logged as a warning (see {@link Engine#mayWarn()}). */
  private boolean warned;

  FailureBackoff(Engine engine) {
    this.engine = engine;
  }

  /** Counts a failure and logs it on {@code log}, the reflector's. */
  void failed(Logger log, ReflectorException error) {
    failures++;
    if (!failing) {
      failing = true;
      warned = engine.mayWarn();
      if (warned) {
        log.warn("{} (API server {}); retrying with backoff (the other watches that fail within {} s are logged "
            + "at DEBUG)", error.getMessage(), engine.server, Engine.WARNING_INTERVAL.toSeconds());
      } else {
        log.debug("{} (API server {}); retrying with backoff", error.getMessage(), engine.server);
      }
    } else {
      log.debug("{} (failure {})", error.getMessage(), failures);
    }
  }

  boolean failing() {
    return failing;
  }

  /**
   * The list and watch of {@code what} work: the run of failures ends, told on {@code log} at the level its start
   * was.
   */
  void recovered(Logger log, String what) {
    if (failing && warned) {
      log.info("The list and watch of {} work again", what);
    } else if (failing) {
      log.debug("The list and watch of {} work again", what);
    }
    failing = false;
    failures = 0;
  }

  /** @return the nanoseconds to wait after the failures so far before the next attempt */
  long delayNanos() {
    long initial = engine.settings.initialBackoff().toNanos();
    long max = engine.settings.maxBackoff().toNanos();
    long delay = initial << Math.min(failures - 1, 20);
    if (delay <= 0 || delay > max) {
      delay = max;
    }
    // jitter in the upper half: never longer than the maximum, never in step with other reflectors
    return delay / 2 + (long) (engine.random.getAsDouble() * (delay / 2));
  }
}
