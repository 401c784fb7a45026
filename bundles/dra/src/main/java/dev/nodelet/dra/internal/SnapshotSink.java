package dev.nodelet.dra.internal;

import dev.nodelet.controller.Backoff;
import dev.nodelet.controller.Scheduler;
import dev.nodelet.controller.StreamMonitor;
import dev.nodelet.controller.WorkQueue;
import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.Pool;
import dev.nodelet.dra.SnapshotListener;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.Clock;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds the {@link DriverTable} from the snapshot stream of each monitored driver: one {@link StreamMonitor} per
 * driver follows the stream (retries, back-off, logging, stop), and this sink validates its snapshots and hands the
 * driver to the queue.
 */
final class SnapshotSink implements StreamMonitor.Events {

  private static final Logger LOG = LoggerFactory.getLogger(NodeResourcesController.class);

  private final DriverTable table;
  private final WorkQueue<String> queue;
  private final KubernetesSerialization serialization;
  private final Clock clock;

  SnapshotSink(DriverTable table, WorkQueue<String> queue, KubernetesSerialization serialization, Clock clock) {
    this.table = table;
    this.queue = queue;
    this.serialization = serialization;
    this.clock = clock;
  }

  /** The monitor of one registration of a driver, not started yet. */
  StreamMonitor monitor(String name, DeviceSnapshots driver, Scheduler scheduler, Backoff backoff) {
    return StreamMonitor.builder(name, "snapshot stream of DRA driver " + name,
        attempt -> driver.subscribe(new Listener(attempt)), scheduler).backoff(backoff).firstRetryAtOnce()
        .events(this).build();
  }

  /** Passes one attempt's stream on through the attempt, so that a stale stream reports nothing. */
  private final class Listener implements SnapshotListener {
    private final StreamMonitor.Attempt attempt;

    Listener(StreamMonitor.Attempt attempt) {
      this.attempt = attempt;
    }

    @Override
    public void onSnapshot(List<Pool> pools) {
      if (attempt.delivered()) {
        snapshot(attempt.monitor(), pools);
      }
    }

    @Override
    public void onError(Throwable cause, boolean retryable) {
      attempt.failed(cause, retryable);
    }

    @Override
    public void onCompleted() {
      attempt.completed();
    }
  }

  private void snapshot(StreamMonitor monitor, List<Pool> pools) {
    String name = monitor.name();
    LOG.debug("DRA driver {} reported {} pools", name, pools == null ? 0 : pools.size());
    List<Pool> copy;
    String error = null;
    try {
      DriverDataValidator.validate(name, pools);
      // a private, normalised copy: the driver keeps its objects, and equal content compares equal
      copy = pools.stream().map(p -> new Pool(p.name(), p.devices().stream().map(serialization::clone).toList(),
          p.sharedCounters().stream().map(serialization::clone).toList())).toList();
    } catch (InvalidDriverDataException e) {
      copy = null;
      error = e.getMessage();
    } catch (RuntimeException e) {
      // data the validator did not foresee (a broken model object, say) is rejected the same way
      copy = null;
      error = "driver \"" + name + "\" reported resources that cannot be read: " + e;
    }
    synchronized (table) {
      DriverTable.Active current = table.active.get(name);
      if (current == null || current.monitor != monitor) {
        return;
      }
      if (error != null) {
        table.errors.put(name, error);
        current.lastError = error;
      } else if (copy.equals(current.refused)) {
        current.lastSnapshot = clock.instant(); // the same content the server cannot store: the error stays
      } else {
        table.errors.remove(name);
        current.pools = copy;
        current.lastSnapshot = clock.instant();
        current.lastError = null;
        current.refused = null;
      }
    }
    if (error != null) {
      LOG.error("Snapshot rejected, the published slices stay as they are: {}", error);
    } else {
      queue.add(name);
    }
  }

  @Override
  public void failed(StreamMonitor monitor, Throwable cause, boolean retryable) {
    synchronized (table) {
      DriverTable.Active current = table.active.get(monitor.name());
      if (current != null && current.monitor == monitor) {
        current.lastError = String.valueOf(cause);
      }
    }
    if (!retryable) {
      ended(monitor); // a stream refused for good (Unimplemented) ends as a completed one does
    }
  }

  @Override
  public void ended(StreamMonitor monitor) {
    synchronized (table) {
      DriverTable.Active current = table.active.get(monitor.name());
      if (current == null || current.monitor != monitor || current.pools != null) {
        return; // the last snapshot stays in force
      }
      current.pools = List.of(); // a driver that never reported has no resources
    }
    queue.add(monitor.name());
  }
}
