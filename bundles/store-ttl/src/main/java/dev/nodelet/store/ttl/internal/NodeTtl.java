package dev.nodelet.store.ttl.internal;

import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.kube.watch.ReflectorEngine;
import dev.nodelet.kube.watch.ReflectorListener;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Optional;

/**
 * The time-to-live a node asks for in an annotation, kept current by a reflector on that one node: for plain Java
 * programs ({@code TtlStoreStrategy.Builder.nodeName}). In OSGi the strategy reads the annotation from the
 * {@code NodeIdentity} service instead and keeps no watch. {@link #close()} ends the watch at once, also one whose
 * request is still in flight.
 */
public final class NodeTtl implements AutoCloseable {

  private final String annotation;
  private final ReflectorEngine reflectors;
  private final Reflector<Node> reflector;
  private volatile Node node;

  private NodeTtl(KubernetesClient client, String nodeName, String annotation) {
    this.annotation = annotation;
    this.reflectors = ReflectorEngine.builder(client).build();
    this.reflector = reflectors.reflector(Node.class).fieldSelector("metadata.name=" + nodeName)
        .listener(new ReflectorListener<>() {
          @Override
          public void onAdd(Node added) {
            node = added;
          }

          @Override
          public void onUpdate(Node oldNode, Node newNode) {
            node = newNode;
          }

          @Override
          public void onDelete(Node deleted) {
            node = null;
          }
        }).start();
  }

  /** Starts watching the node without waiting for it. */
  public static NodeTtl start(KubernetesClient client, String nodeName, String annotation) {
    return new NodeTtl(client, nodeName, annotation);
  }

  /** The annotation's value in whole seconds, if the node is known, has it and it parses (negative means 0). */
  public Optional<Duration> ttl() {
    Node current = node;
    if (current == null || current.getMetadata().getAnnotations() == null) {
      return Optional.empty();
    }
    return parse(current.getMetadata().getAnnotations().get(annotation));
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

  /** Stops the watch and its threads; {@link #ttl()} keeps answering with the node as last seen. Idempotent. */
  @Override
  public void close() {
    reflector.close();
    reflectors.close();
  }
}
