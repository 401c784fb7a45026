package dev.nodelet.store.ttl.internal;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The time-to-live a node asks for in an annotation, kept current by a watch on that one node: for plain Java
 * programs ({@code TtlStoreStrategy.Builder.nodeName}). In OSGi the strategy reads the annotation from the
 * {@code NodeIdentity} service instead and keeps no watch.
 */
public final class NodeTtl implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(NodeTtl.class);

  private final SharedIndexInformer<Node> informer;
  private final String nodeName;
  private final String annotation;

  private NodeTtl(SharedIndexInformer<Node> informer, String nodeName, String annotation) {
    this.informer = informer;
    this.nodeName = nodeName;
    this.annotation = annotation;
  }

  /** Starts watching the node without waiting for it. */
  public static NodeTtl start(KubernetesClient client, String nodeName, String annotation) {
    SharedIndexInformer<Node> informer = client.nodes().withName(nodeName).runnableInformer(0);
    informer.exceptionHandler((started, error) -> {
      LOG.debug("Watch of node {} failed, retrying: {}", nodeName, error.getMessage());
      return true;
    });
    informer.start();
    return new NodeTtl(informer, nodeName, annotation);
  }

  /** The annotation's value in whole seconds, if the node is known, has it and it parses (negative means 0). */
  public Optional<Duration> ttl() {
    Node node = informer.getStore().getByKey(nodeName);
    if (node == null || node.getMetadata().getAnnotations() == null) {
      return Optional.empty();
    }
    return parse(node.getMetadata().getAnnotations().get(annotation));
  }

  /** An annotation's value in whole seconds, if it parses (negative means 0). */
  public static Optional<Duration> parse(String value) {
    if (value == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(Duration.ofSeconds(Long.parseLong(value)));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  /**
   * Stops the informer, twice. fabric8's {@code Reflector.stop()} (7.5.2) closes the watch it knows of and only then
   * marks itself stopped: a list that completed in between starts a watch that nobody closes, and the API server keeps
   * it (found by the bundle churn test, issue 9: one node watch left in about two thousand stops of the TTL
   * strategy). The second stop finds that watch and closes it; no watch starts after the first stop has returned.
   * A fabric8 HTTP watch closed before its response has arrived still leaves its connection open in the client
   * (about once in a thousand closes within milliseconds of the start): the OSGi component avoids both by keeping
   * no watch at all.
   */
  @Override
  public void close() {
    informer.stop();
    informer.stop();
  }
}
