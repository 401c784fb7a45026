package dev.nodelet.dra.claims;

import java.util.List;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A read-only view of the claim manager, registered as an OSGi service by the {@code nodelet-dra-claims} bundle for
 * the shell and for metrics. Every answer is a snapshot.
 */
@ProviderType
public interface ClaimStatus {

  /** @return the claims used by pods of this node, and those being unprepared, ordered by namespace and name */
  List<ClaimInfo> claims();

  /** @return per container and claim entry, the CDI device IDs, ordered by pod and container */
  List<ContainerDevices> containers();

  /** @return the health of every device that a driver reported, ordered by driver, pool and device */
  List<DeviceHealthInfo> health();

  /**
   * @return what was wrong with the checkpoint file at start (it was moved aside and rebuilt), if anything
   */
  Optional<String> checkpointProblem();
}
