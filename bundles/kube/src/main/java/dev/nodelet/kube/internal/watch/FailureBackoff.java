package dev.nodelet.kube.internal.watch;

import dev.nodelet.controller.Backoff;
import dev.nodelet.kube.watch.ReflectorException;
import org.slf4j.Logger;

/**
 * A reflector's run of failures: how it is logged (a warning for the first reflector to fail in an engine's
 * {@link Engine#WARNING_INTERVAL}, DEBUG for the others and for every later failure) and the backoff before its next
 * attempt: the controller runtime's {@link Backoff} from the engine's initial to its maximum backoff, each wait drawn
 * from the upper half of its delay (never longer than the maximum, never in step with other reflectors). Used on the
 * reflector's serial executor only.
 */
final class FailureBackoff {

  private final Engine engine;
  private final Backoff backoff;
  private boolean failing;
  /** Whether this failure period was logged as a warning (see {@link Engine#mayWarn()}). */
  private boolean warned;

  FailureBackoff(Engine engine) {
    this.engine = engine;
    this.backoff = Backoff.exponential(engine.settings.initialBackoff(), engine.settings.maxBackoff())
        .jitterUpperHalf(engine.random).build();
  }

  /**
   * Counts a failure and logs it on {@code log}, the reflector's.
   *
   * @return the nanoseconds to wait after the failures so far before the next attempt
   */
  long failed(Logger log, ReflectorException error) {
    long delay = backoff.failed(engine.nanoTime.getAsLong()).toNanos();
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
      log.debug("{} (failure {})", error.getMessage(), backoff.failures());
    }
    return delay;
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
    backoff.reset();
  }
}
