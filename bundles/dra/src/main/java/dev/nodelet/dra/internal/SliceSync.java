package dev.nodelet.dra.internal;

import dev.nodelet.controller.Scheduler;
import dev.nodelet.controller.WorkQueue;
import dev.nodelet.dra.Pool;
import dev.nodelet.kube.watch.Reflector;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker of the node resources controller: takes one driver at a time from the {@link WorkQueue}, compares the
 * desired slices (its last valid snapshot, or none once its grace period is over) with the stored ones and writes
 * only the difference; a failed sync is retried with the queue's rate limiting (the kubelet's
 * {@code DefaultControllerRateLimiter}).
 */
final class SliceSync {

  private static final Logger LOG = LoggerFactory.getLogger(NodeResourcesController.class);

  private final KubernetesClient client;
  private final String nodeName;
  private final Supplier<Optional<String>> nodeUid;
  private final DriverTable table;
  private final WorkQueue<String> queue;
  private final Scheduler scheduler;
  private final OwnWrites ownWrites;
  private final Optional<DraMetrics> metrics;
  private final int maxDevicesPerSlice;
  private final Map<String, String> syncFailures = new ConcurrentHashMap<>();

  SliceSync(KubernetesClient client, String nodeName, Supplier<Optional<String>> nodeUid, DriverTable table,
      WorkQueue<String> queue, Scheduler scheduler, OwnWrites ownWrites, Optional<DraMetrics> metrics,
      int maxDevicesPerSlice) {
    this.client = client;
    this.nodeName = nodeName;
    this.nodeUid = nodeUid;
    this.table = table;
    this.queue = queue;
    this.scheduler = scheduler;
    this.ownWrites = ownWrites;
    this.metrics = metrics;
    this.maxDevicesPerSlice = maxDevicesPerSlice;
  }

  /** Why the last sync of each driver failed, until one succeeds. */
  Map<String, String> syncFailures() {
    return Map.copyOf(syncFailures);
  }

  /** The worker thread's loop: waits for the slices to sync, then works until the queue shuts down. */
  void work(Reflector<ResourceSlice> reflector, CompletableFuture<Void> synced) {
    try {
      synced.get();
      LOG.info("The ResourceSlices of node {} have synced", nodeName);
      for (String name = queue.take(); name != null; name = queue.take()) {
        process(reflector, name);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // closing
    } catch (ExecutionException e) {
      LOG.error("The ResourceSlices of node {} did not sync; nothing is published", nodeName, e);
    }
  }

  private void process(Reflector<ResourceSlice> reflector, String name) {
    long start = System.nanoTime();
    boolean failed = true;
    try {
      sync(reflector, name);
      syncFailures.remove(name);
      failed = false;
      queue.forget(name);
    } catch (NodeNotKnownException e) {
      // usual at start-up, until NodeIdentity has seen the Node: no stack trace for it
      LOG.debug("DRA driver {} waits: {}", name, e.getMessage());
      syncFailures.put(name, String.valueOf(e.getMessage()));
      queue.addRateLimited(name);
    } catch (RuntimeException e) {
      // API errors and bugs alike (the kubelet recovers panics here): retry with rate limiting
      LOG.error("Syncing the ResourceSlices of DRA driver {} failed, retrying", name, e);
      syncFailures.put(name, e.getClass().getSimpleName() + ": " + e.getMessage());
      queue.addRateLimited(name);
    } finally {
      if (metrics.isPresent()) {
        metrics.get().synced(start, failed);
      }
      queue.done(name);
    }
  }

  private void sync(Reflector<ResourceSlice> reflector, String name) {
    List<Pool> pools;
    boolean wipe = false; // else only the slices the controller wrote are its to change
    synchronized (table) {
      if (table.selfPublishing.containsKey(name)) {
        return; // the driver writes these slices itself
      }
      DriverTable.Active current = table.active.get(name);
      if (current != null) {
        if (current.pools == null) {
          return; // no snapshot yet: what is published stays
        }
        if (current.refused == current.pools) {
          return; // reported once; a changed snapshot or a restart tries again
        }
        pools = current.pools;
      } else {
        DriverTable.Leaving left = table.leaving.get(name);
        long deadline = left == null ? table.startupDeadline : Math.max(table.startupDeadline, left.deadline());
        if (scheduler.nanoTime() - deadline < 0) {
          return; // within the grace period; a timer enqueues the driver at its end
        }
        wipe = left != null && left.wipe();
        table.leaving.remove(name);
        pools = List.of();
      }
    }
    boolean all = wipe;
    List<ResourceSlice> stored = ownWrites.overlay(name, reflector.list().stream()
        .filter(slice -> name.equals(NodeSlices.driverOf(slice)) && (all || NodeSlices.owned(slice))).toList());
    SlicePlan plan = SlicePlan.of(name, nodeName, pools, stored, maxDevicesPerSlice,
        client.getKubernetesSerialization());
    if (plan.isEmpty()) {
      LOG.debug("The ResourceSlices of DRA driver {} are in step", name);
      return;
    }
    var slices = client.resources(ResourceSlice.class);
    for (ResourceSlice update : plan.updates()) {
      ResourceSlice updated = slices.resource(update).update();
      metrics.ifPresent(DraMetrics::updated);
      ownWrites.written(updated);
      LOG.debug("Updated ResourceSlice {} of DRA driver {}", update.getMetadata().getName(), name);
      if (refused(name, pools, update.getSpec(), updated)) {
        return;
      }
    }
    for (ResourceSliceSpec spec : plan.creates()) {
      ResourceSlice created = slices.resource(newSlice(name, spec)).create();
      metrics.ifPresent(DraMetrics::created);
      ownWrites.written(created);
      LOG.debug("Created ResourceSlice {} of DRA driver {}", created.getMetadata().getName(), name);
      if (refused(name, pools, spec, created)) {
        return;
      }
    }
    for (ResourceSlice obsolete : plan.deletes()) {
      slices.withName(obsolete.getMetadata().getName()).delete();
      metrics.ifPresent(DraMetrics::deleted);
      ownWrites.deleted(obsolete);
      LOG.debug("Deleted ResourceSlice {} of DRA driver {}", obsolete.getMetadata().getName(), name);
    }
    LOG.info("Published DRA driver {}: {} slices updated, {} created, {} deleted", name, plan.updates().size(),
        plan.creates().size(), plan.deletes().size());
  }

  /**
   * Whether the server stored the slice without gated fields that were written; then the problem is logged and
   * shown once and this snapshot is not written again, which would go on forever.
   */
  private boolean refused(String name, List<Pool> pools, ResourceSliceSpec written, ResourceSlice stored) {
    String problem = DroppedFields.check(stored.getMetadata().getName(), written, stored.getSpec());
    if (problem == null) {
      return false;
    }
    String error = "driver \"" + name + "\": " + problem;
    synchronized (table) {
      DriverTable.Active current = table.active.get(name);
      if (current != null && current.pools == pools) {
        current.refused = pools;
        current.lastError = error;
        table.errors.put(name, error);
      }
    }
    LOG.error("{}", error);
    return true;
  }

  private ResourceSlice newSlice(String driver, ResourceSliceSpec spec) {
    String uid = nodeUid.get().orElseThrow(() -> new NodeNotKnownException(
        "the UID of Node " + nodeName + " is not known yet, so a ResourceSlice cannot be owned by it"));
    return NodeSlices.newSlice(nodeName, uid, driver, spec);
  }

  /** The Node's UID is not known yet, so nothing can be created that it owns; retried with rate limiting. */
  private static final class NodeNotKnownException extends IllegalStateException {
    NodeNotKnownException(String message) {
      super(message);
    }
  }
}
