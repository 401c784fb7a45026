package dev.nodelet.dra.claims.internal;

import dev.nodelet.controller.Backoff;
import dev.nodelet.controller.Scheduler;
import dev.nodelet.controller.StreamMonitor;
import dev.nodelet.dra.DeviceHealth;
import dev.nodelet.dra.DeviceHealthSource;
import dev.nodelet.dra.HealthListener;
import dev.nodelet.dra.Subscription;
import dev.nodelet.dra.claims.DeviceHealthInfo;
import dev.nodelet.dra.claims.internal.HealthState.Report;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The device health of each driver's newest registration, like the kubelet's health manager: one
 * {@link StreamMonitor} per driver follows the health stream (a broken stream is watched again after a delay with
 * the health kept), and this class keeps the reports per {@code pool/device} with their receipt time; a device whose
 * report is older than its timeout reads as Unknown (computed on read, so no timer is needed), and a driver without
 * health ("Unimplemented", or a registration without a health stream) or one that is gone has its health cleared.
 */
public final class HealthTracker implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(HealthTracker.class);
  static final int MAX_MESSAGE = 1024;

  private final Clock clock;
  private final Scheduler scheduler;
  private final Duration retry;
  private final HealthState state;
  private final Runnable onChange;
  private final Object lock = new Object();
  private final Object writeLock = new Object();
  private final Map<String, Followed> streams = new HashMap<>(); // guarded by lock
  private final Map<String, Map<String, Report>> reports = new TreeMap<>(); // guarded by lock
  private boolean closed; // guarded by lock

  /**
   * @param scheduler where a broken stream's retry waits (the claim manager's executor; drivable in tests)
   * @param state where the health is persisted and restored from
   * @param onChange called (on the reporting thread, must not block) after a device's health, message or timeout
   *     changed, or a driver's health was cleared
   */
  public HealthTracker(Clock clock, Scheduler scheduler, Duration retry, HealthState state, Runnable onChange) {
    this.clock = clock;
    this.scheduler = scheduler;
    this.retry = retry;
    this.state = state;
    this.onChange = onChange;
  }

  /** Reads the persisted health (on the claim manager's thread, not in a constructor); live reports win. */
  public void restore() {
    Map<String, Map<String, Report>> saved = state.read();
    synchronized (lock) {
      saved.forEach((driver, devices) -> {
        Followed followed = streams.get(driver);
        if (followed != null && followed.noHealth) {
          return; // its newest registration reports none
        }
        Map<String, Report> known = reports.computeIfAbsent(driver, k -> new TreeMap<>());
        devices.forEach(known::putIfAbsent);
      });
    }
  }

  private void changed() {
    synchronized (writeLock) {
      Map<String, Map<String, Report>> copy = new TreeMap<>();
      synchronized (lock) {
        if (closed) {
          return;
        }
        reports.forEach((d, devices) -> copy.put(d, new TreeMap<>(devices)));
      }
      state.write(copy);
    }
    onChange.run();
  }

  /** The health of a device now: Unknown when not reported or when its report timed out. */
  public DeviceHealth.Health health(String driver, String pool, String device) {
    synchronized (lock) {
      Report r = reports.getOrDefault(driver, Map.of()).get(pool + "/" + device);
      return r == null || clock.instant().isAfter(r.received().plus(r.timeout())) ? DeviceHealth.Health.UNKNOWN
          : r.health();
    }
  }

  /** When the next report that reads as known now times out, if one does. */
  public java.util.Optional<Instant> nextExpiry() {
    Instant now = clock.instant();
    synchronized (lock) {
      return reports.values().stream().flatMap(m -> m.values().stream())
          .map(r -> r.received().plus(r.timeout())).filter(t -> !now.isAfter(t)).min(Comparator.naturalOrder());
    }
  }

  /** Follows this registration of the driver instead of any earlier one. */
  public void follow(String driverName, DeviceHealthSource driver) {
    StreamMonitor monitor = monitor(driverName, driver);
    Followed previous;
    synchronized (lock) {
      if (closed) {
        return;
      }
      previous = streams.put(driverName, new Followed(monitor));
    }
    if (previous != null) {
      previous.monitor.stop();
    }
    monitor.start();
  }

  /** The driver is gone: its stream ends and its health is forgotten. */
  public void forget(String driverName) {
    Followed previous;
    boolean cleared;
    synchronized (lock) {
      previous = streams.remove(driverName);
      cleared = reports.remove(driverName) != null;
    }
    if (previous != null) {
      previous.monitor.stop();
    }
    if (cleared) {
      changed();
    }
  }

  /** The health now, Unknown where a report timed out. */
  public List<DeviceHealthInfo> health() {
    Instant now = clock.instant();
    List<DeviceHealthInfo> out = new ArrayList<>();
    synchronized (lock) {
      reports.forEach((driver, devices) -> devices.forEach((key, r) -> {
        int slash = key.lastIndexOf('/');
        boolean expired = now.isAfter(r.received().plus(r.timeout()));
        out.add(new DeviceHealthInfo(driver, key.substring(0, slash), key.substring(slash + 1),
            expired ? DeviceHealth.Health.UNKNOWN : r.health(), r.message(), r.received()));
      }));
    }
    out.sort(Comparator.comparing(DeviceHealthInfo::driver).thenComparing(DeviceHealthInfo::pool)
        .thenComparing(DeviceHealthInfo::device));
    return out;
  }

  @Override
  public void close() {
    List<Followed> open;
    synchronized (lock) {
      closed = true;
      open = new ArrayList<>(streams.values());
      streams.clear();
      reports.clear(); // memory only: the file keeps the health for the next start
    }
    open.forEach(f -> f.monitor.stop());
  }

  /**
   * The monitor of one driver registration's health stream; stale once another registration replaced it. A
   * registration without a health stream clears the health an older one reported.
   */
  private StreamMonitor monitor(String driverName, DeviceHealthSource driver) {
    return StreamMonitor.builder(driverName, "health stream of DRA driver " + driverName, attempt -> {
      Subscription opened = driver.watchHealth(new Listener(driverName, attempt));
      if (opened == null) {
        noHealth(driverName, attempt.monitor());
      }
      return opened;
    }, scheduler).backoff(Backoff.exponential(retry, retry).build()).events(ends).build();
  }

  private boolean current(String driverName, StreamMonitor monitor) {
    Followed followed = streams.get(driverName);
    return followed != null && followed.monitor == monitor;
  }

  private void noHealth(String driverName, StreamMonitor monitor) {
    boolean cleared;
    synchronized (lock) {
      if (!current(driverName, monitor)) {
        return;
      }
      streams.get(driverName).noHealth = true;
      cleared = reports.remove(driverName) != null;
    }
    if (cleared) {
      LOG.info("DRA driver {}'s newest registration reports no device health; its health is cleared", driverName);
      changed();
    }
  }

  /** The ends of the health streams: "Unimplemented" clears the driver's health, a broken stream keeps it. */
  private final StreamMonitor.Events ends = new StreamMonitor.Events() {
    @Override
    public void failed(StreamMonitor monitor, Throwable cause, boolean retryable) {
      if (retryable) {
        return; // the health is kept while the monitor watches again
      }
      boolean cleared;
      synchronized (lock) {
        cleared = current(monitor.name(), monitor) && reports.remove(monitor.name()) != null;
      }
      if (cleared) {
        LOG.info("DRA driver {} reports no device health, its health is cleared", monitor.name());
        changed();
      }
    }

    @Override
    public void ended(StreamMonitor monitor) {
      // not called: a HealthListener has no clean end (a health stream only breaks or is closed)
    }
  };

  /** Passes one attempt's reports on through the attempt, so that a superseded stream reports nothing. */
  private final class Listener implements HealthListener {
    private final String driverName;
    private final StreamMonitor.Attempt attempt;

    Listener(String driverName, StreamMonitor.Attempt attempt) {
      this.driverName = driverName;
      this.attempt = attempt;
    }

    @Override
    public void onHealth(List<DeviceHealth> devices) {
      Instant now = clock.instant();
      boolean changed = false;
      synchronized (lock) {
        if (!current(driverName, attempt.monitor()) || !attempt.delivered()) {
          return; // a superseded stream
        }
        Map<String, Report> known = reports.computeIfAbsent(driverName, k -> new TreeMap<>());
        for (DeviceHealth d : devices) {
          String message = d.message().length() > MAX_MESSAGE ? d.message().substring(0, MAX_MESSAGE - 3) + "..."
              : d.message();
          Report next = new Report(d.health(), message, now, d.timeout());
          Report before = known.put(d.poolName() + "/" + d.deviceName(), next);
          changed |= before == null || before.health() != next.health() || !before.message().equals(message)
              || !before.timeout().equals(next.timeout())
              || now.isAfter(before.received().plus(before.timeout())); // was Unknown by its lease
          if (before == null || before.health() != next.health()) {
            LOG.info("DRA driver {} reports device {}/{} {}{}", driverName, d.poolName(), d.deviceName(),
                d.health(), message.isEmpty() ? "" : ": " + message);
          }
        }
      }
      if (changed) {
        changed();
      }
    }

    @Override
    public void onError(Throwable cause, boolean retryable) {
      attempt.failed(cause, retryable);
    }
  }

  /** The followed registration of a driver. */
  private static final class Followed {
    final StreamMonitor monitor;
    boolean noHealth; // guarded by lock: the registration reports no health

    Followed(StreamMonitor monitor) {
      this.monitor = monitor;
    }
  }
}
