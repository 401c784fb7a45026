package dev.nodelet.dra.internal;

import dev.nodelet.controller.WorkQueue;
import dev.nodelet.dra.Pool;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.Clock;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Validates the snapshots of the driver monitors into the {@link DriverTable} and hands their drivers to the queue. */
final class SnapshotSink implements DriverMonitor.Sink {

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

  @Override
  public void snapshot(DriverMonitor monitor, List<Pool> pools) {
    String name = monitor.driverName();
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
  public void failed(DriverMonitor monitor, Throwable cause, boolean retryable) {
    synchronized (table) {
      DriverTable.Active current = table.active.get(monitor.driverName());
      if (current != null && current.monitor == monitor) {
        current.lastError = String.valueOf(cause);
      }
    }
  }

  @Override
  public void ended(DriverMonitor monitor) {
    synchronized (table) {
      DriverTable.Active current = table.active.get(monitor.driverName());
      if (current == null || current.monitor != monitor || current.pools != null) {
        return; // the last snapshot stays in force
      }
      current.pools = List.of(); // a driver that never reported has no resources
    }
    queue.add(monitor.driverName());
  }
}
