/**
 * The Kubernetes connection of a Nodelet node.
 *
 * <p>The {@code nodelet-kube} bundle registers one configured
 * {@code io.fabric8.kubernetes.client.KubernetesClient} service and one {@link dev.nodelet.kube.NodeIdentity}
 * service, both configured by the PID {@code dev.nodelet.kube}. Consumers must not close the client: it belongs to
 * the bundle and is closed when the configuration changes or the bundle stops.
 */
@Export
@Version("1.3.0")
package dev.nodelet.kube;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
