/**
 * DRA drivers that run as processes of their own and register through a registration folder, as kubelet plugins
 * do; plain Java, so that a driver's registration can be tested without OSGi.
 *
 * <p>{@link dev.nodelet.dra.grpc.PluginWatcher} watches the folder, runs the kubelet's registration handshake with
 * every socket in it and hands each driver that passed it to a {@link dev.nodelet.dra.grpc.PluginListener} as a
 * {@link dev.nodelet.dra.grpc.RegisteredPlugin}, whose role objects ({@link dev.nodelet.dra.ClaimPreparation},
 * {@link dev.nodelet.dra.DeviceHealthSource}, {@link dev.nodelet.dra.DeviceSnapshots}) speak gRPC to the driver. The
 * {@code nodelet-dra-grpc} bundle runs one (configuration PID {@code dev.nodelet.dra.grpc}) and registers every
 * driver as an OSGi service under its roles.
 */
@Export
@Version("1.0.0")
package dev.nodelet.dra.grpc;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
