package dev.nodelet.kube.internal.watch;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;

/**
 * Reads a change event (ADDED, MODIFIED, DELETED) in the API server's encoding, {@code {"type":"MODIFIED",
 * "object":{...}}}, with its object decoded once, straight into its type: read into a map first and then converted,
 * every event cost twice the work.
 */
final class ChangeEvents {

  private static final List<String> TYPES = List.of("ADDED", "MODIFIED", "DELETED");
  /** How the API server starts a change's line, its type first: the object follows. */
  private static final List<String> PREFIXES = TYPES.stream()
      .map(type -> "{\"type\":\"" + type + "\",\"object\":").toList();

  /** A change event's type and object. */
  record Change<T>(String type, T object) {
  }

  private ChangeEvents() {
  }

  /**
   * @return the change, or null if the line is not a change in that encoding or its object cannot be read so: the
   *     caller reads it as a map then, which names what is wrong
   */
  static <T extends HasMetadata> Change<T> decode(KubernetesSerialization serialization, Class<T> type,
      String line) {
    for (int i = 0; i < PREFIXES.size(); i++) {
      String prefix = PREFIXES.get(i);
      if (line.startsWith(prefix)) {
        int end = line.lastIndexOf('}'); // the event's own closing brace
        if (end <= prefix.length()) {
          return null;
        }
        T object;
        try {
          object = serialization.unmarshal(line.substring(prefix.length(), end), type);
        } catch (RuntimeException e) {
          return null;
        }
        return object == null || object.getMetadata() == null ? null : new Change<>(TYPES.get(i), object);
      }
    }
    return null;
  }
}
