package dev.nodelet.shell.views;

import dev.nodelet.dra.DraStatus;
import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.SliceSummary;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The text that shells show of {@link DraStatus}: the one place that decides what {@code nodelet:drivers} and
 * {@code nodelet:slices} print, whichever shell runs them (Gogo or Karaf).
 */
public final class DraViews {

  private DraViews() {
  }

  /**
   * @param drivers the drivers, in the order to show them
   * @return a header and one line per driver: name, state, last snapshot, backoff, grace period left, last error
   */
  public static String drivers(List<DriverStatus> drivers) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"DRIVER", "STATE", "LAST-SNAPSHOT", "BACKOFF", "GRACE-LEFT", "LAST-ERROR"});
    for (DriverStatus driver : drivers) {
      rows.add(new String[] {driver.driverName(), driver.state().name(),
          driver.lastSnapshot().map(Object::toString).orElse("never"), duration(driver.backoff()),
          duration(driver.gracePeriodLeft()),
          driver.lastError().map(e -> e.replaceAll("\\s+", " ")).orElse("-")});
    }
    return ObjectViews.table(rows);
  }

  /**
   * @param slices the slices, in the order to show them
   * @return a header and one line per slice: name, driver, pool, pool generation, number of devices
   */
  public static String slices(List<SliceSummary> slices) {
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"NAME", "DRIVER", "POOL", "GENERATION", "DEVICES"});
    for (SliceSummary slice : slices) {
      rows.add(new String[] {slice.name(), slice.driver(), slice.pool(), Long.toString(slice.generation()),
          Integer.toString(slice.devices())});
    }
    return ObjectViews.table(rows);
  }

  /** Seconds with up to millisecond precision, {@code -} for zero. */
  private static String duration(Duration duration) {
    if (duration.isZero()) {
      return "-";
    }
    return BigDecimal.valueOf(duration.toMillis(), 3).stripTrailingZeros().toPlainString() + "s";
  }
}
