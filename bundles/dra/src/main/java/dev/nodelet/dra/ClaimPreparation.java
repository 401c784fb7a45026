package dev.nodelet.dra;

import java.util.List;
import java.util.Map;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A DRA driver that prepares the ResourceClaims of the pods of this node, like a kubelet DRA plugin; registered as
 * an OSGi service (whiteboard) and called by Nodelet's claim manager. Of several services with the same
 * {@link #driverName()} (a bundle update, a plugin restart), the one registered last is called.
 *
 * @since 3.0
 */
@ConsumerType
public interface ClaimPreparation {

  /**
   * The driver name, as in the allocation results of a claim.
   *
   * @return a DNS subdomain of at most 63 characters; constant for the lifetime of the service
   */
  String driverName();

  /**
   * Prepares claims allocated with devices of this driver, like the kubelet's {@code NodePrepareResources}. Called
   * from a thread of Nodelet's claim manager, one call at a time per driver; may block. Preparing a prepared claim
   * again returns the same devices.
   *
   * @param claims the claims, each with at least one device of this driver in its allocation
   * @return a result for every claim, keyed by claim UID; a missing UID counts as a failure
   * @throws RuntimeException if the call as a whole failed; every claim is retried later
   */
  Map<String, PrepareResult> prepare(List<ClaimRef> claims);

  /**
   * Undoes {@link #prepare}, like the kubelet's {@code NodeUnprepareResources}; unpreparing a claim that is not
   * prepared succeeds. Same threading as {@link #prepare}.
   *
   * @param claims the claims that no pod of this node uses any more
   * @return the error per claim UID for the claims that failed; empty when all were unprepared
   * @throws RuntimeException if the call as a whole failed; every claim is retried later
   */
  Map<String, String> unprepare(List<ClaimRef> claims);
}
