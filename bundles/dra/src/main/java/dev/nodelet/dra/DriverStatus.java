package dev.nodelet.dra;

import dev.nodelet.records.RecordChecks;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * What the node controller knows of one DRA driver right now, for tools such as the shell.
 *
 * @param driverName the driver name, as in {@code ResourceSlice.spec.driver}
 * @param state what the controller does with the driver
 * @param lastSnapshot when the controller last accepted a snapshot of the driver; empty if never (or, for a driver
 *     that is {@link State#LEAVING} from a previous run, not in this run)
 * @param lastError the last error of the driver's stream or data, cleared by its next accepted snapshot
 * @param backoff while {@link State#BACKING_OFF}, the delay before the controller subscribes again; otherwise the
 *     delay the next retryable error would cause ({@link Duration#ZERO} before the first one)
 * @param gracePeriodLeft while {@link State#LEAVING}, the time until the driver's slices are deleted; otherwise
 *     {@link Duration#ZERO}
 * @since 1.1
 */
public record DriverStatus(String driverName, State state, Optional<Instant> lastSnapshot,
    Optional<String> lastError, Duration backoff, Duration gracePeriodLeft) {

  /** What the controller does with a driver. */
  public enum State {
    /**
     * The driver is registered and writes its own ResourceSlices (a kubelet DRA plugin): the controller leaves them
     * alone while it is registered, and deletes them after the grace period once it is gone.
     *
     * @since 1.2
     */
    SELF_PUBLISHING,
    /** The driver is registered and its snapshot stream is open. */
    MONITORING,
    /** The driver's stream failed with a retryable error; the controller subscribes again after the backoff. */
    BACKING_OFF,
    /**
     * The driver is registered but its stream ended (cleanly or with a non-retryable error): its last snapshot
     * stays published until the driver service is registered again or goes away. A driver service whose name is
     * not a valid driver name is shown in this state too, with the reason as its last error: it is never
     * monitored and nothing of it is published.
     */
    STOPPED,
    /**
     * The driver service went away, or has not (re)appeared since the controller started: its slices stay for the
     * grace period and are deleted then unless the driver returns.
     */
    LEAVING,
    /**
     * A registration of the driver failed (it was refused, its socket's mode is too loose, its socket does not
     * answer, or it was withdrawn for being unreachable), as a {@link RegistrationFailures} service reports it: the
     * last error says why and what to do; a non-zero backoff is the delay before the next attempt. The driver name
     * is the one the driver gave, or, if it gave none, the name of its registration socket.
     *
     * @since 2.1
     */
    NOT_REGISTERED
  }

  /** Rejects {@code null} so that every status has a definite shape. */
  public DriverStatus {
    RecordChecks.requireNonNull(DriverStatus.class, driverName, state, lastSnapshot, lastError, backoff,
        gracePeriodLeft);
  }
}
