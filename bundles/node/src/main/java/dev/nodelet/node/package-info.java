/**
 * Node mode: the {@link dev.nodelet.node.RegisteredNode} service, registered while this Nodelet keeps its
 * {@code Node} (PID {@code dev.nodelet.node}, {@code enabled=true}), so that the parts that run pods on the node
 * can require it and read the node as last seen.
 */
@Export
@Version("1.0.0")
package dev.nodelet.node;

import org.osgi.annotation.bundle.Export;
import org.osgi.annotation.versioning.Version;
