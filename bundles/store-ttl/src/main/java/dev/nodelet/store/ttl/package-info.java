/**
 * The {@code ttl} store strategy (the kubelet's "Cache") for plain Java programs:
 * {@link dev.nodelet.store.ttl.TtlStoreStrategy#builder}. In OSGi the {@code nodelet-store-ttl} bundle registers it
 * as a {@code StoreStrategy} service with {@code nodelet.strategy=ttl}, configured by the PID
 * {@code dev.nodelet.store.ttl}.
 */
@Export
@Version("1.4.0")
package dev.nodelet.store.ttl;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
