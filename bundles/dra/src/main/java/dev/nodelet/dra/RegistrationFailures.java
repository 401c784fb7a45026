package dev.nodelet.dra;

import java.util.List;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A source of driver registrations that says which ones failed, such as the registration folder of
 * {@code nodelet-dra-grpc}, registered as an OSGi service (whiteboard). The node controller's
 * {@link DraStatus#drivers()}, and so {@code nodelet:drivers}, lists them with the drivers it knows, so that a
 * registration that failed is seen where the drivers are, not in the log only.
 *
 * @since 2.1
 */
@ConsumerType
public interface RegistrationFailures {

  /**
   * Must not block.
   *
   * @return one status per registration that failed and has not been retried with success since, in state
   *     {@link DriverStatus.State#NOT_REGISTERED}, with the reason (and what to do) as its last error
   */
  List<DriverStatus> failedRegistrations();
}
