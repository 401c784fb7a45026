package dev.nodelet.dra;

import java.util.List;
import java.util.Map;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A read-only view of the DRA node controller, registered as an OSGi service by the {@code nodelet-dra} bundle
 * while the controller runs: the drivers it knows and the ResourceSlices of this node in its informer cache. The
 * answers are snapshots; nothing here changes what the controller does.
 *
 * @since 1.1
 */
@ProviderType
public interface DraStatus {

  /** @return the name of the node whose slices the controller publishes */
  String nodeName();

  /**
   * @return every driver that is registered or whose slices are in their grace period, then (since 2.1) every
   *     failed registration that a {@link RegistrationFailures} service reports, ordered by driver name
   */
  List<DriverStatus> drivers();

  /**
   * @return the ResourceSlices of this node in the controller's informer cache, ordered by driver, pool and name;
   *     empty until the informer has listed them
   */
  List<SliceSummary> slices();

  /**
   * @return why the last sync of a driver's ResourceSlices failed (an API server error, or this node not known yet),
   *     by driver name; a driver leaves it with its next successful sync
   * @since 2.0
   */
  default Map<String, String> syncFailures() {
    return Map.of();
  }
}
