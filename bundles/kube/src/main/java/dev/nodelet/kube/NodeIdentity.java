package dev.nodelet.kube;

import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * The identity of the node that this Nodelet serves.
 *
 * <p>Registered as a service next to the {@code KubernetesClient} service and with the same lifetime. The node name
 * is fixed for the lifetime of a service instance; a configuration change that alters it replaces the service.
 */
@ProviderType
public interface NodeIdentity {

  /** The service property that carries the node name on both services of {@code nodelet-kube}. */
  String NODE_NAME_PROPERTY = "nodelet.node.name";

  /**
   * The name of this node's {@code Node} object: the configured name, else the environment variable
   * {@code NODE_NAME}, else the host name in lower case.
   *
   * @return the node name, a DNS subdomain; never {@code null}
   */
  String nodeName();

  /**
   * The UID of this node's {@code Node} object as last seen on the API server.
   *
   * <p>Empty until the object has been seen, and again after it was deleted; a re-created {@code Node} has a new
   * UID. Never blocks: the value is kept fresh by a watch on that single object.
   *
   * @return the UID, or empty while the API server holds no such {@code Node} or has not been reached yet
   */
  Optional<String> nodeUid();

  /**
   * An annotation of this node's {@code Node} object as last seen on the API server, kept fresh by the same watch
   * as {@link #nodeUid()}, so that consumers (such as the {@code ttl} store strategy) need no watch of their own.
   * Never blocks.
   *
   * @param key the annotation's key, such as {@code node.alpha.kubernetes.io/ttl}
   * @return the value, or empty while the node has no such annotation or has not been seen; the default
   *     implementation knows no annotations
   * @since 1.1
   */
  default Optional<String> nodeAnnotation(String key) {
    return Optional.empty();
  }
}
