package dev.nodelet.dra.internal;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The controller's own writes that the informer has not delivered yet (client-go's mutation cache). Without it a
 * second sync right after a create would not see the new slice and create it again.
 *
 * <p>An entry lives until the informer shows a resourceVersion at least as new (or, for a delete, no longer shows
 * the slice) or reports the slice deleted.
 */
final class OwnWrites {

  private record Entry(ResourceSlice slice, boolean deleted, long resourceVersion) {
  }

  private final Map<String, Entry> entries = new ConcurrentHashMap<>();

  void written(ResourceSlice slice) {
    entries.put(slice.getMetadata().getName(), new Entry(slice, false, resourceVersion(slice)));
  }

  void deleted(ResourceSlice slice) {
    entries.put(slice.getMetadata().getName(), new Entry(slice, true, resourceVersion(slice)));
  }

  /** The informer saw the slice deleted: nothing we wrote about it matters any more. */
  void forget(String name) {
    entries.remove(name);
  }

  /** The slices of {@code driver} as the informer shows them ({@code stored}) with our newer writes on top. */
  List<ResourceSlice> overlay(String driver, List<ResourceSlice> stored) {
    Map<String, ResourceSlice> byName = new LinkedHashMap<>();
    stored.forEach(s -> byName.put(s.getMetadata().getName(), s));
    entries.forEach((name, entry) -> {
      if (!driver.equals(entry.slice().getSpec().getDriver())) {
        return;
      }
      ResourceSlice seen = byName.get(name);
      long seenVersion = seen == null ? -1 : resourceVersion(seen);
      if (entry.deleted()) {
        if (seen == null) {
          entries.remove(name, entry);
        } else if (seenVersion <= entry.resourceVersion()) {
          byName.remove(name);
        }
      } else if (seen != null && (seenVersion >= entry.resourceVersion() || seenVersion < 0
          || entry.resourceVersion() < 0)) {
        entries.remove(name, entry);
      } else {
        byName.put(name, entry.slice());
      }
    });
    return new ArrayList<>(byName.values());
  }

  private static long resourceVersion(ResourceSlice slice) {
    try {
      return Long.parseLong(slice.getMetadata().getResourceVersion());
    } catch (NumberFormatException e) {
      return -1; // not comparable: trust the informer as soon as it shows the slice
    }
  }
}
