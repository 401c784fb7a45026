/**
 * Pods of this node run as OSGi bundles: the names a pod uses to choose what its containers receive, and
 * {@link dev.nodelet.pods.PodsStatus}, what shells show of the pods and their containers.
 *
 * <p>The implementation ({@code dev.nodelet.pods.internal}) is a Declarative Services component on the
 * configuration PID {@value dev.nodelet.pods.PodBundles#PID}; without that configuration it does nothing.
 */
@Export
@Version("1.2.0")
package dev.nodelet.pods;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
