/**
 * The DRA node controller as plain Java: {@link dev.nodelet.dra.runtime.NodeResources} publishes the
 * devices of {@link dev.nodelet.dra.DeviceSnapshots} drivers as this node's ResourceSlices, with an injectable
 * clock and
 * {@link dev.nodelet.dra.runtime.Scheduler} ({@link dev.nodelet.dra.runtime.ManualScheduler} for tests), so drivers
 * can be tested against an API server without OSGi.
 */
@Export
@Version("2.0.0")
package dev.nodelet.dra.runtime;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
