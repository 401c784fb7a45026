package dev.nodelet.dra;

import java.util.List;
import java.util.Map;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A DRA driver that reports the devices of this node, registered as an OSGi service (whiteboard).
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
 *       published until the driver service is registered again or goes away.</li>
 * </ul>
 *
 * <p>Two services with the same {@link #driverName()} are allowed for a moment (a bundle update); the one registered
 * last is the one monitored.
 *
 * <p>Since 1.2 a driver can also prepare the ResourceClaims of the pods of this node ({@link #prepare},
 * {@link #unprepare}) and report the health of its devices ({@link #watchHealth}), like a kubelet DRA plugin. All
 * three are optional: the defaults say that the driver does neither. A driver that publishes its own ResourceSlices
 * (a kubelet DRA plugin) says so with {@link #publishesOwnSlices()}, and the controller then leaves its slices
 * alone.
 */
@ConsumerType
public interface DraDriver {

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

  /**
   * Whether the driver writes its own ResourceSlices, as drivers written for the kubelet do; the controller then
   * never subscribes to it nor touches its slices.
   *
   * @return {@code false} by default
   * @since 1.2
   */
  default boolean publishesOwnSlices() {
    return false;
  }

  /**
   * Whether {@link #prepare} and {@link #unprepare} are implemented.
   *
   * @return {@code false} by default
   * @since 1.2
   */
  default boolean preparesClaims() {
    return false;
  }

  /**
   * Prepares claims allocated with devices of this driver, like the kubelet's {@code NodePrepareResources}. Called
   * from a thread of Nodelet's claim manager, one call at a time per driver; may block. Preparing a prepared claim
   * again returns the same devices.
   *
   * @param claims the claims, each with at least one device of this driver in its allocation
   * @return a result for every claim, keyed by claim UID; a missing UID counts as a failure
   * @throws UnsupportedOperationException if the driver does not prepare claims (the default)
   * @throws RuntimeException if the call as a whole failed; every claim is retried later
   * @since 1.2
   */
  default Map<String, PrepareResult> prepare(List<ClaimRef> claims) {
    throw new UnsupportedOperationException("DRA driver " + driverName() + " does not prepare claims");
  }

  /**
   * Undoes {@link #prepare}, like the kubelet's {@code NodeUnprepareResources}; unpreparing a claim that is not
   * prepared succeeds. Same threading as {@link #prepare}.
   *
   * @param claims the claims that no pod of this node uses any more
   * @return the error per claim UID for the claims that failed; empty when all were unprepared
   * @throws UnsupportedOperationException if the driver does not prepare claims (the default)
   * @throws RuntimeException if the call as a whole failed; every claim is retried later
   * @since 1.2
   */
  default Map<String, String> unprepare(List<ClaimRef> claims) {
    throw new UnsupportedOperationException("DRA driver " + driverName() + " does not prepare claims");
  }

  /**
   * Starts a stream of device health reports, like the kubelet's {@code NodeWatchResources}. Must not block.
   *
   * @param listener receives the reports and the end of the stream
   * @return the handle that ends the stream, or {@code null} if the driver reports no health (the default)
   * @since 1.2
   */
  default Subscription watchHealth(HealthListener listener) {
    return null;
  }
}
