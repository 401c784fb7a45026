/**
 * The {@code watch} store strategy (the kubelet's "Watch", Nodelet's default) for plain Java programs:
 * {@link dev.nodelet.store.watch.WatchStoreStrategy#builder}. In OSGi the {@code nodelet-store-watch} bundle registers
 * it as a {@code StoreStrategy} service with {@code nodelet.strategy=watch}, configured by the PID
 * {@code dev.nodelet.store.watch}.
 */
@Export
@Version("2.0.0")
package dev.nodelet.store.watch;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
