package dev.nodelet.records;

import java.lang.reflect.RecordComponent;
import java.util.Arrays;

/** The null checks of value records: one call in a compact constructor instead of one line per component. */
public final class RecordChecks {

  // component names per record type, read once: records of the watch path are built per event
  private static final ClassValue<String[]> NAMES = new ClassValue<>() {
    @Override
    protected String[] computeValue(Class<?> type) {
      return Arrays.stream(type.getRecordComponents()).map(RecordComponent::getName).toArray(String[]::new);
    }
  };

  private RecordChecks() {}

  /**
   * Rejects {@code null} among the leading components of a record.
   *
   * @param type the record a compact constructor builds
   * @param values the values of its first components, in the order the record declares them: all of them, or the
   *     leading ones that must be present when later ones may be {@code null}
   * @throws NullPointerException naming the record and the first component that is {@code null}
   * @throws IllegalArgumentException if more values are given than the record has components
   */
  public static void requireNonNull(Class<? extends Record> type, Object... values) {
    String[] names = NAMES.get(type);
    if (values.length > names.length) {
      throw new IllegalArgumentException(type.getName() + " has " + names.length + " components, " + values.length
          + " values were given");
    }
    for (int i = 0; i < values.length; i++) {
      if (values[i] == null) {
        throw new NullPointerException(type.getSimpleName() + "." + names[i] + " must not be null");
      }
    }
  }
}
