/**
 * The one list/watch machinery of a Nodelet node.
 *
 * <p>A {@link dev.nodelet.kube.watch.Reflector} keeps one resource type (optionally one namespace, field selector and
 * label selector) in step with the API server and tells a {@link dev.nodelet.kube.watch.ReflectorListener} what
 * changed. It syncs with a WatchList request ({@code sendInitialEvents=true}) where the server supports it and with
 * LIST then WATCH otherwise; it resumes from the last resourceVersion after a cut or a server restart and lists again
 * only when the server answers {@code 410 Gone}; a reflector can also start from a state its owner kept, by a watch from
 * that state's resourceVersion without a list; it requests bookmarks; it closes its watch the moment it is closed,
 * also while the request is still in flight. Re-establishment after a failure waits for an exponential backoff with
 * jitter and then for a token of the {@link dev.nodelet.kube.watch.Reflectors}' shared restart bucket, so that
 * thousands of watches do not hit a recovering API server at once.
 *
 * <p>The {@code nodelet-kube} bundle registers one {@link dev.nodelet.kube.watch.Reflectors} service next to its
 * {@code KubernetesClient}; plain Java programs build one with {@link dev.nodelet.kube.watch.ReflectorEngine#builder}.
 */
@Export
@Version("1.2.0")
package dev.nodelet.kube.watch;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
