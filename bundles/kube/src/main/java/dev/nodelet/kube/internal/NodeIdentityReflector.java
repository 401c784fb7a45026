package dev.nodelet.kube.internal;

import dev.nodelet.kube.NodeIdentity;
import dev.nodelet.kube.watch.Reflector;
import dev.nodelet.kube.watch.ReflectorException;
import dev.nodelet.kube.watch.ReflectorListener;
import dev.nodelet.kube.watch.Reflectors;
import io.fabric8.kubernetes.api.model.Node;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link NodeIdentity} whose UID and annotations follow the node's {@code Node} object through a reflector on that
 * single object (field selector {@code metadata.name}). {@link #start()} returns at once; the reflector lists,
 * watches and retries until {@link #close()}.
 */
public final class NodeIdentityReflector implements NodeIdentity, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(NodeIdentityReflector.class);

  private final String nodeName;
  private final Reflectors reflectors;
  private volatile String uid;
  private volatile Map<String, String> annotations = Map.of();
  private final AtomicInteger failures = new AtomicInteger();
  private volatile Reflector<Node> reflector;

  public NodeIdentityReflector(Reflectors reflectors, String nodeName) {
    this.reflectors = Objects.requireNonNull(reflectors, "reflectors");
    this.nodeName = Objects.requireNonNull(nodeName, "nodeName");
  }

  /** Starts listing and watching in the background; never blocks. */
  public synchronized void start() {
    if (reflector == null) {
      reflector = reflectors.reflector(Node.class).fieldSelector("metadata.name=" + nodeName)
          .listener(new Listener()).start();
    }
  }

  @Override
  public String nodeName() {
    return nodeName;
  }

  @Override
  public Optional<String> nodeUid() {
    return Optional.ofNullable(uid);
  }

  @Override
  public Optional<String> nodeAnnotation(String key) {
    return Optional.ofNullable(annotations.get(key));
  }

  /** Ends the watch; the UID stays as last seen. */
  @Override
  public synchronized void close() {
    if (reflector != null) {
      reflector.close();
    }
  }

  @Override
  public String toString() {
    return "NodeIdentity[" + nodeName + ", uid " + uid + "]";
  }

  private final class Listener implements ReflectorListener<Node> {
    @Override
    public void onAdd(Node node) {
      update(node);
    }

    @Override
    public void onUpdate(Node oldNode, Node newNode) {
      update(newNode);
    }

    @Override
    public void onDelete(Node node) {
      LOG.info("Node {} deleted", nodeName);
      uid = null;
      annotations = Map.of();
    }

    @Override
    public void onSynced(String resourceVersion) {
      failures.set(0); // the API server answered: the next failure is a new outage
    }

    @Override
    public void onError(ReflectorException error) {
      // the reflector logs the outage; this line says which part of Nodelet waits for it
      if (failures.incrementAndGet() == 1) {
        LOG.warn("Node {}: its UID and annotations wait for the API server", nodeName);
      }
    }

    private void update(Node node) {
      failures.set(0);
      Map<String, String> newAnnotations = node.getMetadata().getAnnotations();
      annotations = newAnnotations == null ? Map.of() : Collections.unmodifiableMap(new HashMap<>(newAnnotations));
      String newUid = node.getMetadata().getUid();
      if (!Objects.equals(uid, newUid)) {
        LOG.info("Node {} has UID {}", nodeName, newUid);
        uid = newUid;
      }
    }
  }
}
