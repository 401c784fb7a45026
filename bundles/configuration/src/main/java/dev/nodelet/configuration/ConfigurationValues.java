package dev.nodelet.configuration;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
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

  /**
   * A file system path.
   *
   * @param key the configuration key, for the message
   * @param value the value as configured
   * @return the path, without surrounding blanks
   * @throws IllegalArgumentException naming the key if the value is empty or not a path
   */
  public static Path path(String key, String value) {
    String stripped = value == null ? "" : value.strip();
    if (stripped.isEmpty()) {
      throw new IllegalArgumentException(key + ": must not be empty");
    }
    try {
      return Path.of(stripped);
    } catch (InvalidPathException e) {
      throw new IllegalArgumentException(key + ": not a path (" + e.getMessage() + ")");
    }
  }
}
