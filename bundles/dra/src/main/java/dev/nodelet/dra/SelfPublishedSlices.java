package dev.nodelet.dra;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * A DRA driver that writes the ResourceSlices of this node itself, as drivers written for the kubelet do; registered
 * as an OSGi service (whiteboard) instead of {@link DeviceSnapshots}. The node resources controller leaves the
 * slices of {@link #driverName()} alone while such a service is registered, and deletes them a grace period after
 * the last one went away, as the kubelet wipes the slices of a plugin that is gone.
 *
 * @since 3.0
 */
@ConsumerType
public interface SelfPublishedSlices {

  /**
   * The driver name, as in {@code ResourceSlice.spec.driver}.
   *
   * @return a DNS subdomain of at most 63 characters; constant for the lifetime of the service
   */
  String driverName();
}
