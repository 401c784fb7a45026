package dev.nodelet.kube.internal;

import dev.nodelet.kube.NodeIdentity;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link NodeIdentity} whose UID and annotations follow the node's {@code Node} object through an informer on that
 * single object (field selector {@code metadata.name}). {@link #start()} returns at once; the informer lists, watches and retries
 * in the client's threads until {@link #close()}.
 */
public final class NodeIdentityInformer implements NodeIdentity, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(NodeIdentityInformer.class);

  private final String nodeName;
  private final SharedIndexInformer<Node> informer;
  private volatile String uid;
  private volatile Map<String, String> annotations = Map.of();
  private final AtomicInteger failures = new AtomicInteger();

  public NodeIdentityInformer(KubernetesClient client, String nodeName) {
    this.nodeName = Objects.requireNonNull(nodeName, "nodeName");
    // withName() makes the informer list and watch with the field selector metadata.name=<nodeName>
    this.informer = client.nodes().withName(nodeName).runnableInformer(0);
    informer.addEventHandler(new Handler());
    // keep retrying: the API server may come up after this node does. The handler runs once per attempt of the
    // informer's backoff; the first failure names the API server, later ones are one short line each
    String server = apiServer(client);
    informer.exceptionHandler((started, failure) -> {
      int attempt = failures.incrementAndGet();
      if (attempt == 1) {
        LOG.warn("Cannot list and watch Node {} on the API server at {} ({}); retrying with backoff", nodeName,
            server, failure.toString());
      } else {
        LOG.warn("Node {}: the API server at {} still fails after {} attempts ({})", nodeName, server, attempt,
            failure.toString());
      }
      return true;
    });
  }

  /** host:port of the client's API server, for log lines. */
  static String apiServer(KubernetesClient client) {
    java.net.URL url = client.getMasterUrl();
    return url.getHost() + ":" + (url.getPort() < 0 ? url.getDefaultPort() : url.getPort());
  }

  /** Starts listing and watching in the background; never blocks. */
  public void start() {
    informer.start();
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

  /** Stops the informer; the UID stays as last seen. */
  @Override
  public void close() {
    // twice: a fabric8 7.5.2 informer stopped while its list or watch is in flight can leave a watch open on the
    // API server; a second stop closes most of them (a loop of 6,000 stops left none), not all (see NodeTtl)
    informer.stop();
    informer.stop();
  }

  @Override
  public String toString() {
    return "NodeIdentity[" + nodeName + ", uid " + uid + "]";
  }

  private final class Handler implements ResourceEventHandler<Node> {
    @Override
    public void onAdd(Node node) {
      update(node);
    }

    @Override
    public void onUpdate(Node oldNode, Node newNode) {
      update(newNode);
    }

    @Override
    public void onDelete(Node node, boolean deletedFinalStateUnknown) {
      LOG.info("Node {} deleted", nodeName);
      uid = null;
      annotations = Map.of();
    }

    private void update(Node node) {
      failures.set(0); // the API server answered: the next failure is a new outage
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
