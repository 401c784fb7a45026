package dev.nodelet.dra.claims.internal;

import dev.nodelet.controller.Scheduler;
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
 * Follows the health stream of each driver's newest registration, like the kubelet's health manager: reports are
 * kept per {@code pool/device} with their receipt time, a device whose report is older than its timeout reads as
 * Unknown (computed on read, so no timer is needed), a broken stream is watched again after a delay with the
 * health kept, and a driver without health ("Unimplemented") or one that is gone has its health cleared.
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
  private final Map<String, Stream> streams = new HashMap<>(); // guarded by lock
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
        Stream stream = streams.get(driver);
        if (stream != null && stream.noHealth) {
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
    Stream stream = new Stream(driverName, driver);
    Stream previous;
    synchronized (lock) {
      if (closed) {
        return;
      }
      previous = streams.put(driverName, stream);
    }
    if (previous != null) {
      previous.stop();
    }
    stream.open();
  }

  /** The driver is gone: its stream ends and its health is forgotten. */
  public void forget(String driverName) {
    Stream previous;
    boolean cleared;
    synchronized (lock) {
      previous = streams.remove(driverName);
      cleared = reports.remove(driverName) != null;
    }
    if (previous != null) {
      previous.stop();
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
    List<Stream> open;
    synchronized (lock) {
      closed = true;
      open = new ArrayList<>(streams.values());
      streams.clear();
      reports.clear(); // memory only: the file keeps the health for the next start
    }
    open.forEach(Stream::stop);
  }

  /** One driver registration's stream and its retries; stale once another stream replaced it. */
  private final class Stream implements HealthListener {
    private final String driverName;
    private final DeviceHealthSource driver;
    private Subscription subscription; // guarded by lock
    private Scheduler.Task retryTimer; // guarded by lock
    private boolean stopped; // guarded by lock
    private boolean noHealth; // guarded by lock: the driver reports no health
    private int failures; // guarded by lock: retries since the stream last delivered a report

    Stream(String driverName, DeviceHealthSource driver) {
      this.driverName = driverName;
      this.driver = driver;
    }

    private boolean current() {
      return !stopped && streams.get(driverName) == this;
    }

    void open() {
      Subscription opened;
      try {
        opened = driver.watchHealth(this);
      } catch (RuntimeException e) {
        onError(e, true);
        return;
      }
      boolean cleared = false;
      synchronized (lock) {
        if (opened == null) {
          // the newest registration reports no health: what an older one reported no longer holds
          noHealth = true;
          cleared = current() && reports.remove(driverName) != null;
        } else if (current()) {
          subscription = opened;
          return;
        }
      }
      if (cleared) {
        LOG.info("DRA driver {}'s newest registration reports no device health; its health is cleared", driverName);
        changed();
      } else if (opened != null) {
        opened.close();
      }
    }

    void stop() {
      Subscription open;
      synchronized (lock) {
        stopped = true;
        open = subscription;
        subscription = null;
        if (retryTimer != null) {
          retryTimer.cancel();
        }
      }
      if (open != null) {
        open.close();
      }
    }

    @Override
    public void onHealth(List<DeviceHealth> devices) {
      Instant now = clock.instant();
      boolean changed = false;
      synchronized (lock) {
        if (!current()) {
          return; // a superseded stream
        }
        if (failures > 0) {
          LOG.info("The health stream of DRA driver {} works again after {} failed attempts", driverName, failures);
          failures = 0;
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
      boolean cleared = false;
      synchronized (lock) {
        if (!current()) {
          return;
        }
        subscription = null;
        if (retryable) {
          // a dead driver fails every attempt: said once, the attempts that follow at DEBUG
          if (failures++ == 0) {
            LOG.warn("The health stream of DRA driver {} ended ({}); watching again every {} ms, the health is"
                + " kept (further failures at DEBUG)", driverName, cause.getMessage(), retry.toMillis());
          } else {
            LOG.debug("The health stream of DRA driver {} failed again ({}, attempt {})", driverName,
                cause.getMessage(), failures, cause);
          }
          retryTimer = scheduler.schedule(this::open, retry);
        } else {
          cleared = reports.remove(driverName) != null;
          LOG.info("DRA driver {} reports no device health: {}", driverName, cause.getMessage());
        }
      }
      if (cleared) {
        changed();
      }
    }
  }
}
