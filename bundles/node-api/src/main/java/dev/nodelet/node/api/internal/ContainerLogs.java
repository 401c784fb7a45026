package dev.nodelet.node.api.internal;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.SynchronousBundleListener;
import org.osgi.service.log.LogEntry;
import org.osgi.service.log.LogListener;
import org.osgi.service.log.LogReaderService;

/**
 * The log lines of every pod container on this node: the log service's records of the bundles installed at a
 * location {@code nodelet-pod:<namespace>/<pod>/<container>} (or below it, {@code .../<container>/...}), one ring per
 * container, released when the container's last bundle is uninstalled.
 */
final class ContainerLogs implements SynchronousBundleListener, AutoCloseable {

  static final String LOCATION_SCHEME = "nodelet-pod:";
  /** A longer message is cut here: one record must not take the whole ring's memory. */
  static final int MAX_LINE = 16 * 1024;

  private final BundleContext context;
  private final int capacity;
  private final Map<String, ContainerLog> logs = new ConcurrentHashMap<>();
  /** The listener of each reader read now; readers come and go while this runs. */
  private final Map<LogReaderService, LogListener> listeners = new ConcurrentHashMap<>();
  /**
   * Per reader ever read, the time of the newest record it gave: a reader back again replays only what is newer.
   * Weak: a reader withdrawn for good (its bundle refreshed) must not keep its class loader.
   */
  private final Map<LogReaderService, Long> readUntil = Collections.synchronizedMap(new WeakHashMap<>());
  private volatile boolean closed;

  /** Reads no log service until one is {@linkplain #addReader added}. */
  ContainerLogs(BundleContext context, int capacity) {
    this.context = context;
    this.capacity = capacity;
    context.addBundleListener(this);
    for (Bundle bundle : context.getBundles()) {
      containerOf(bundle.getLocation()).ifPresent(c -> logs.computeIfAbsent(c, k -> new ContainerLog(capacity)));
    }
  }

  /**
   * Reads the records of {@code reader} from now on, after the little history it has (oldest first), for a
   * container started before it came.
   */
  synchronized void addReader(LogReaderService reader) {
    if (closed || listeners.containsKey(reader)) {
      return;
    }
    long before = readUntil.getOrDefault(reader, Long.MIN_VALUE);
    LogListener listener = entry -> {
      readUntil.merge(reader, entry.getTime(), Math::max);
      logged(entry);
    };
    listeners.put(reader, listener);
    reader.addLogListener(listener);
    List<LogEntry> history = new ArrayList<>();
    for (Enumeration<LogEntry> e = reader.getLog(); e.hasMoreElements(); ) {
      LogEntry entry = e.nextElement();
      if (entry.getTime() > before) {
        history.add(entry);
      }
    }
    Collections.reverse(history);
    history.forEach(listener::logged);
  }

  /** Stops reading {@code reader}; what it logged stays. */
  synchronized void removeReader(LogReaderService reader) {
    LogListener listener = listeners.remove(reader);
    if (listener != null) {
      reader.removeLogListener(listener);
    }
  }

  /**
   * @return {@code namespace/pod/container} of a bundle location of a pod container, empty for any other bundle
   */
  static Optional<String> containerOf(String location) {
    if (location == null || !location.startsWith(LOCATION_SCHEME)) {
      return Optional.empty();
    }
    String[] parts = location.substring(LOCATION_SCHEME.length()).split("/", 4);
    if (parts.length < 3 || parts[0].isEmpty() || parts[1].isEmpty() || parts[2].isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(parts[0] + "/" + parts[1] + "/" + parts[2]);
  }

  /** @return the log of a container of this node, empty when no bundle of it is installed */
  Optional<ContainerLog> log(String namespace, String pod, String container) {
    return Optional.ofNullable(logs.get(namespace + "/" + pod + "/" + container));
  }

  /** Keeps a record of a container's bundle. */
  void logged(LogEntry entry) {
    Bundle bundle = entry.getBundle();
    if (bundle == null || bundle.getState() == Bundle.UNINSTALLED) {
      return; // a record that arrives after its bundle went would make a ring nobody releases
    }
    String logger = entry.getLoggerName();
    if (logger != null && logger.startsWith("Events.")) {
      return; // the framework's own bundle, service and framework events, not the container's output
    }
    containerOf(bundle.getLocation()).ifPresent(container -> logs.computeIfAbsent(container,
        k -> new ContainerLog(capacity)).add(Instant.ofEpochMilli(entry.getTime()), format(entry)));
  }

  /** One line: level, logger and message, the exception's summary at the end. */
  static String format(LogEntry entry) {
    StringBuilder line = new StringBuilder().append(entry.getLogLevel()).append(' ');
    if (entry.getLoggerName() != null && !entry.getLoggerName().isEmpty()) {
      line.append(entry.getLoggerName()).append(": ");
    }
    line.append(entry.getMessage());
    if (entry.getException() != null) {
      line.append(" (").append(entry.getException()).append(')');
    }
    String text = line.toString().replace("\r\n", " ").replace('\n', ' ').replace('\r', ' ');
    return text.length() > MAX_LINE ? text.substring(0, MAX_LINE) : text;
  }

  @Override
  public void bundleChanged(BundleEvent event) {
    String location = event.getBundle().getLocation();
    Optional<String> container = containerOf(location);
    if (container.isEmpty()) {
      return;
    }
    if (event.getType() == BundleEvent.INSTALLED) {
      logs.computeIfAbsent(container.get(), k -> new ContainerLog(capacity));
    } else if (event.getType() == BundleEvent.UNINSTALLED && !installed(container.get(), event.getBundle())) {
      ContainerLog gone = logs.remove(container.get());
      if (gone != null) {
        gone.close();
      }
    }
  }

  /** Whether a bundle of this container other than {@code leaving} is still installed. */
  private boolean installed(String container, Bundle leaving) {
    for (Bundle bundle : context.getBundles()) {
      if (bundle.getBundleId() != leaving.getBundleId() && bundle.getState() != Bundle.UNINSTALLED
          && containerOf(bundle.getLocation()).filter(container::equals).isPresent()) {
        return true;
      }
    }
    return false;
  }

  /** @return how many containers have a log kept */
  int containers() {
    return logs.size();
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      List.copyOf(listeners.keySet()).forEach(this::removeReader);
    }
    try {
      context.removeBundleListener(this);
    } catch (IllegalStateException e) {
      // the framework stops: its listeners go with it
    }
    logs.values().forEach(ContainerLog::close);
    logs.clear();
  }
}
