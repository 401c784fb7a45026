package dev.nodelet.configuration;

import java.util.function.LongSupplier;

/** Checks of single configuration values, with the messages every component gives for them. */
public final class ConfigurationValues {

  private ConfigurationValues() {}

  /**
   * A whole number in a range.
   *
   * @param key the configuration key, for the message
   * @param read reads the value; Declarative Services and the OSGi converter fail on the first read of a value they
   *     cannot convert, so the read happens here
   * @param min the smallest value allowed
   * @param max the largest value allowed
   * @param unit the unit, for the message ("seconds"); empty for none
   * @return the value
   * @throws IllegalArgumentException naming the key, the range and the value
   */
  public static long within(String key, LongSupplier read, long min, long max, String unit) {
    String of = unit.isEmpty() ? "" : " of " + unit;
    long value;
    try {
      value = read.getAsLong();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(key + ": not a whole number" + of + " (" + e.getMessage() + ")");
    }
    if (value < min || value > max) {
      throw new IllegalArgumentException(key + ": must be between " + min + " and " + max
          + (unit.isEmpty() ? "" : " " + unit) + ", was " + value);
    }
    return value;
  }
}
