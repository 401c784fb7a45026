package dev.nodelet.dra.internal;

import dev.nodelet.controller.WorkQueue;
import dev.nodelet.kube.watch.ReflectorException;
import dev.nodelet.kube.watch.ReflectorListener;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Every event on this node's slices enqueues the slice's driver, as in the kubelet. */
final class SliceEvents implements ReflectorListener<ResourceSlice> {

  private static final Logger LOG = LoggerFactory.getLogger(NodeResourcesController.class);

  private final String nodeName;
  private final WorkQueue<String> queue;
  private final OwnWrites ownWrites;
  private final CompletableFuture<Void> synced;
  private final AtomicInteger failures = new AtomicInteger();

  SliceEvents(String nodeName, WorkQueue<String> queue, OwnWrites ownWrites, CompletableFuture<Void> synced) {
    this.nodeName = nodeName;
    this.queue = queue;
    this.ownWrites = ownWrites;
    this.synced = synced;
  }

  @Override
  public void onAdd(ResourceSlice slice) {
    queue.add(NodeSlices.driverOf(slice));
  }

  @Override
  public void onUpdate(ResourceSlice oldSlice, ResourceSlice newSlice) {
    queue.add(NodeSlices.driverOf(newSlice));
  }

  @Override
  public void onDelete(ResourceSlice slice) {
    ownWrites.forget(slice.getMetadata().getName());
    queue.add(NodeSlices.driverOf(slice));
  }

  @Override
  public void onSynced(String resourceVersion) {
    failures.set(0);
    synced.complete(null);
  }

  @Override
  public void onError(ReflectorException error) {
    // the reflector logs the outage; this line says what waits for it
    if (failures.incrementAndGet() == 1 && !synced.isDone()) {
      LOG.warn("The ResourceSlices of node {} are not published until the API server answers", nodeName);
    }
  }
}
