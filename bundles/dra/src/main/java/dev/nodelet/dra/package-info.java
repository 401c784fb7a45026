/**
 * Dynamic Resource Allocation on a Nodelet node.
 *
 * <p>A DRA driver registers one service object under the roles it has (whiteboard pattern):
 * {@link dev.nodelet.dra.DeviceSnapshots} (devices whose slices Nodelet publishes) or
 * {@link dev.nodelet.dra.SelfPublishedSlices} (a driver that writes its own), {@link dev.nodelet.dra.ClaimPreparation}
 * and {@link dev.nodelet.dra.DeviceHealthSource}. The
 * {@code nodelet-dra} bundle subscribes to every DeviceSnapshots service and publishes the devices it reports as
 * {@code resource.k8s.io/v1} ResourceSlices of this node: one or more slices per {@link dev.nodelet.dra.Pool},
 * owned by the Node object, with the pool generation and slice count of the v1 API. A driver that goes away keeps
 * its slices for a grace period (configuration PID {@code dev.nodelet.dra}), so a bundle update causes no churn.
 */
@Export
@Version("3.0.0")
package dev.nodelet.dra;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
