/**
 * The pod source of a node for plain Java programs and tests: {@link dev.nodelet.podsource.PodSource} watches the pods
 * bound to one node and tells every {@link dev.nodelet.objectcache.PodListener} (register on add and update,
 * unregister on delete). In OSGi the {@code nodelet-podsource} bundle runs one, configured by the PID
 * {@code dev.nodelet.podsource}.
 */
@Export
@Version("2.1.0")
package dev.nodelet.podsource;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
