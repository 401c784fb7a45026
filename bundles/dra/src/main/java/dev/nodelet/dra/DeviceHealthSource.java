package dev.nodelet.dra;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * A DRA driver that reports the health of its devices, like a kubelet DRA plugin that serves
 * {@code NodeWatchResources}; registered as an OSGi service (whiteboard). Nodelet's claim manager follows the stream
 * of the newest service of each {@link #driverName()} and forgets the driver's health when the last one goes away.
 *
 * @since 3.0
 */
@ConsumerType
public interface DeviceHealthSource {

  /**
   * The driver name, as in {@code ResourceSlice.spec.driver}.
   *
   * @return a DNS subdomain of at most 63 characters; constant for the lifetime of the service
   */
  String driverName();

  /**
   * Starts a stream of device health reports. Must not block.
   *
   * @param listener receives the reports and the end of the stream
   * @return the handle that ends the stream
   */
  Subscription watchHealth(HealthListener listener);
}
