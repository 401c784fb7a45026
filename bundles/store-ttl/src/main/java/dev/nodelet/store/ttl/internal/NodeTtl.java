package dev.nodelet.store.ttl.internal;

import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.informers.impl.ListerWatcher;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The time-to-live a node asks for in an annotation, kept current by a list and watch of that one node: for plain
 * Java programs ({@code TtlStoreStrategy.Builder.nodeName}). In OSGi the strategy reads the annotation from the
 * {@code NodeIdentity} service instead and keeps no watch.
 *
 * <p>Not a fabric8 informer: one stopped while its list or watch is in flight can leave the watch that opens
 * afterwards to nobody. Here a watch that opens after {@link #close()} is closed as soon as it arrives. (A fabric8
 * HTTP watch closed before its response has arrived can still leave its connection in the client, fabric8 7.5.2.)
 */
public final class NodeTtl implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(NodeTtl.class);
  private static final long FIRST_RETRY_MILLIS = 500;
  private static final long MAX_RETRY_MILLIS = 30_000;

  private final ListerWatcher<Node, NodeList> nodes;
  private final String nodeName;
  private final String annotation;
  private final Watcher<Node> watcher = new NodeWatcher();
  private volatile Node node;

  // guarded by this
  private boolean closed;
  private Watch watch;
  private int failures;

  @SuppressWarnings("unchecked")
  private NodeTtl(KubernetesClient client, String nodeName, String annotation) {
    this.nodes = (ListerWatcher<Node, NodeList>) client.nodes();
    this.nodeName = nodeName;
    this.annotation = annotation;
  }

  /** Starts watching the node without waiting for it. */
  public static NodeTtl start(KubernetesClient client, String nodeName, String annotation) {
    NodeTtl ttl = new NodeTtl(client, nodeName, annotation);
    ttl.list();
    return ttl;
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

  /** Stops the watch; {@link #ttl()} keeps answering with the node as last seen. Idempotent. */
  @Override
  public void close() {
    Watch open;
    synchronized (this) {
      closed = true;
      open = watch;
      watch = null;
    }
    if (open != null) {
      open.close();
    }
  }

  private synchronized boolean closed() {
    return closed;
  }

  private void list() {
    if (closed()) {
      return;
    }
    CompletableFuture<NodeList> listed;
    try {
      listed = nodes.submitList(options(null));
    } catch (RuntimeException e) {
      listed = CompletableFuture.failedFuture(e);
    }
    listed.whenComplete((list, error) -> {
      if (error != null) {
        retry(error);
        return;
      }
      List<Node> items = list.getItems();
      node = items.isEmpty() ? null : items.get(0);
      watch(list.getMetadata().getResourceVersion());
    });
  }

  private void watch(String resourceVersion) {
    if (closed()) {
      return;
    }
    CompletableFuture<? extends Watch> opened;
    try {
      opened = nodes.submitWatch(options(resourceVersion), watcher);
    } catch (RuntimeException e) {
      opened = CompletableFuture.failedFuture(e);
    }
    opened.whenComplete((open, error) -> {
      if (error != null) {
        retry(error);
        return;
      }
      synchronized (this) {
        if (!closed) {
          watch = open;
          failures = 0;
          return;
        }
      }
      open.close(); // closed while the watch was opening
    });
  }

  /** Lists again after a backoff; fabric8 reconnects a broken watch itself and tells only what it cannot mend. */
  private void retry(Throwable error) {
    long delay;
    synchronized (this) {
      if (closed) {
        return;
      }
      watch = null;
      delay = Math.min(MAX_RETRY_MILLIS, FIRST_RETRY_MILLIS << Math.min(failures, 10));
      failures++;
    }
    LOG.debug("List or watch of node {} failed, again in {} ms: {}", nodeName, delay, error.toString());
    CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS).execute(this::list);
  }

  private ListOptions options(String resourceVersion) {
    return new ListOptionsBuilder().withFieldSelector("metadata.name=" + nodeName)
        .withResourceVersion(resourceVersion).build();
  }

  private final class NodeWatcher implements Watcher<Node> {

    @Override
    public void eventReceived(Action action, Node changed) {
      switch (action) {
        case ADDED, MODIFIED -> node = changed;
        case DELETED -> node = null;
        default -> { } // ERROR and BOOKMARK carry no node to keep
      }
    }

    @Override
    public void onClose(WatcherException cause) {
      // a 410 Gone, or reconnecting given up: list afresh
      retry(cause);
    }

    @Override
    public void onClose() {
      // closed by close()
    }
  }
}
