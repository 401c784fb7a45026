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
    return table(rows);
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
    return table(rows);
  }

  /** Seconds with up to millisecond precision, {@code -} for zero. */
  private static String duration(Duration duration) {
    if (duration.isZero()) {
      return "-";
    }
    return BigDecimal.valueOf(duration.toMillis(), 3).stripTrailingZeros().toPlainString() + "s";
  }

  /** Columns padded to the widest cell, two spaces apart; the last column is not padded. */
  private static String table(List<String[]> rows) {
    StringBuilder out = new StringBuilder();
    int[] widths = new int[rows.get(0).length];
    for (String[] row : rows) {
      for (int i = 0; i < row.length; i++) {
        widths[i] = Math.max(widths[i], row[i].length());
      }
    }
    for (String[] row : rows) {
      for (int i = 0; i < row.length; i++) {
        out.append(i == row.length - 1 ? row[i] : String.format("%-" + (widths[i] + 2) + "s", row[i]));
      }
      out.append('\n');
    }
    return out.toString();
  }
}
