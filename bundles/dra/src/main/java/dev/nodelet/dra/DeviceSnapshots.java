package dev.nodelet.dra;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * The devices of a DRA driver whose ResourceSlices Nodelet publishes, registered as an OSGi service (whiteboard).
 *
 * <p>The controller calls {@link #subscribe} once per registration and again after a retryable error; each
 * subscription delivers a stream of <em>full</em> snapshots of the driver's pools, like the kubelet's
 * {@code ListAndWatchResources} gRPC call. The same contract therefore fits an in-process driver bundle and an
 * adapter for an external gRPC driver:
 * <ul>
 *   <li>{@link SnapshotListener#onSnapshot} replaces everything the driver reported before;</li>
 *   <li>{@link SnapshotListener#onError} with {@code retryable = true} makes the controller subscribe again after
 *       a backoff with jitter; with {@code retryable = false} (the gRPC status "Unimplemented") monitoring stops;</li>
 *   <li>{@link SnapshotListener#onCompleted} (a clean end of the stream) stops monitoring: the last snapshot stays
 *       published until the service is registered again or goes away.</li>
 * </ul>
 *
 * <p>Two services with the same {@link #driverName()} are allowed for a moment (a bundle update); the one registered
 * last is the one monitored. A driver that also prepares claims or reports health registers the same object under
 * {@link ClaimPreparation} and {@link DeviceHealthSource} too; a driver that writes its own slices registers
 * {@link SelfPublishedSlices} instead of this role.
 *
 * @since 3.0
 */
@ConsumerType
public interface DeviceSnapshots {

  /**
   * The driver name, as in {@code ResourceSlice.spec.driver}.
   *
   * @return a DNS subdomain of at most 63 characters, e.g. {@code gpu.example.com}; constant for the lifetime of
   *     the service
   */
  String driverName();

  /**
   * Starts a stream of snapshots.
   *
   * <p>Must not block: the driver delivers on a thread of its own, or synchronously before returning. It calls the
   * listener from one thread at a time and stops calling it after {@link SnapshotListener#onError},
   * {@link SnapshotListener#onCompleted} or {@link Subscription#close()}.
   *
   * @param listener receives the snapshots and the end of the stream
   * @return the handle that ends the stream; closing it after the stream has ended is allowed
   */
  Subscription subscribe(SnapshotListener listener);
}
