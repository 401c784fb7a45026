package dev.nodelet.dra;

import java.util.Objects;

/**
 * One ResourceSlice of this node as the node controller last saw it, for tools such as the shell.
 *
 * @param name the slice's object name
 * @param driver {@code spec.driver}
 * @param pool {@code spec.pool.name}
 * @param generation {@code spec.pool.generation}
 * @param devices the number of devices in the slice
 * @since 1.1
 */
public record SliceSummary(String name, String driver, String pool, long generation, int devices) {

  /** Rejects {@code null} names. */
  public SliceSummary {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(driver, "driver");
    Objects.requireNonNull(pool, "pool");
  }
}
