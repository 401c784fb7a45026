package dev.nodelet.dra;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * Receives the health reports of one {@link DeviceHealthSource#watchHealth} stream. Implemented by Nodelet; the methods
 * return quickly and never block on I/O.
 *
 * @since 1.2
 */
@ProviderType
public interface HealthListener {

  /**
   * A report on some or all devices of the driver; devices not named keep their last report until its timeout.
   *
   * @param devices the reports
   */
  void onHealth(List<DeviceHealth> devices);

  /**
   * The stream ended.
   *
   * @param cause what went wrong, for the log
   * @param retryable {@code true} to watch again after a backoff; {@code false} when the driver reports no health
   *     (gRPC "Unimplemented"): the health of its devices is forgotten
   */
  void onError(Throwable cause, boolean retryable);
}
