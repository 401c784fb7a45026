/**
 * Preparation of the ResourceClaims of this node's pods, as the kubelet's DRA manager does it.
 *
 * <p>{@link dev.nodelet.dra.claims.ClaimManager} is the plain-Java engine (usable without OSGi, with an injectable
 * clock and executor): for every pod of the node it resolves the pod's ResourceClaims, and once a claim is
 * allocated and reserved for the pod it asks each driver of the allocation to prepare it, keeps the prepared
 * devices and CDI device IDs in a checkpoint file, writes the devices' health into the pods' status, and unprepares
 * the claim when no pod of the node uses it any more. The {@code nodelet-dra-claims} bundle runs it as a component (configuration PID
 * {@code dev.nodelet.dra.claims}) fed by the pod source, every {@link dev.nodelet.dra.ClaimPreparation} service and
 * every {@link dev.nodelet.dra.DeviceHealthSource} service, and registers {@link
 * dev.nodelet.dra.claims.ClaimStatus} for the shell and for metrics.
 */
@Export
@Version("3.1.0")
package dev.nodelet.dra.claims;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
