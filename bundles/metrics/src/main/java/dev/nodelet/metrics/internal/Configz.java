package dev.nodelet.metrics.internal;

import dev.nodelet.configuration.ConfigurationKeys;
import java.lang.reflect.Array;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The effective configuration of every Nodelet PID as JSON, as the kubelet's {@code /configz} serves its own: per
 * PID, each key's value in force (the configured one, else the metatype's default), the keys that were configured,
 * and the configured keys that the metatype does not describe (no component reads them; their values are not shown). Secret values never leave: an attribute the metatype types as a
 * password, and any key that names a token, password, secret, credential or key, show as {@value #REDACTED}.
 */
final class Configz {

  static final String REDACTED = "<redacted>";

  /** A word of a key (split at '.', '_', '-') that marks a secret value; a key naming a file or path holds none. */
  private static final Pattern SECRET_WORD = Pattern.compile(
      "token|password|passwd|passphrase|secret|credentials?|key|apikey|privatekey|bearer|auth");
  private static final Set<String> PLACE_WORDS = Set.of("file", "path", "dir", "folder", "name", "ref");

  /**
   * One attribute the metatype describes.
   *
   * @param id its key
   * @param defaultValue its default, converted to its type; null if none
   * @param password whether the metatype types it as a password
   */
  record Attribute(String id, Object defaultValue, boolean password) {
  }

  /**
   * One configuration, or a PID that the metatype describes and no configuration sets.
   *
   * @param pid the PID ({@code factoryPid~name} for a factory configuration)
   * @param configured what Config Admin holds; empty if not configured
   * @param attributes what the metatype says of its keys; empty if it has no metatype
   */
  record Pid(String pid, Optional<Map<String, Object>> configured, List<Attribute> attributes) {
  }

  private Configz() {}

  /** @return the JSON document of these PIDs, in the order of their names */
  static String json(Collection<Pid> pids) {
    Map<String, Pid> sorted = new TreeMap<>();
    pids.forEach(pid -> sorted.put(pid.pid(), pid));
    StringBuilder out = new StringBuilder("{\n  \"configurations\": {");
    String separator = "\n";
    for (Pid pid : sorted.values()) {
      out.append(separator);
      separator = ",\n";
      pid(out, pid);
    }
    return out.append(sorted.isEmpty() ? "}\n}\n" : "\n  }\n}\n").toString();
  }

  private static void pid(StringBuilder out, Pid pid) {
    Map<String, Object> configured = pid.configured().orElse(Map.of());
    Map<String, Attribute> described = new TreeMap<>();
    pid.attributes().forEach(a -> described.put(a.id(), a));
    Map<String, Object> effective = new TreeMap<>();
    described.values().stream().filter(a -> a.defaultValue() != null)
        .forEach(a -> effective.put(a.id(), a.defaultValue()));
    // a key the metatype does not describe is in force nowhere: listed under unknownKeys only
    configured.forEach((key, value) -> {
      if (!ConfigurationKeys.framework(key) && (described.isEmpty() || described.containsKey(key))) {
        effective.put(key, value);
      }
    });
    out.append("    ").append(string(pid.pid())).append(": {\n");
    out.append("      \"configured\": ").append(pid.configured().isPresent()).append(",\n");
    Object file = configured.get("felix.fileinstall.filename");
    if (file != null) {
      out.append("      \"file\": ").append(string(file.toString())).append(",\n");
    }
    out.append("      \"properties\": {");
    String separator = "\n";
    for (Map.Entry<String, Object> entry : effective.entrySet()) {
      Attribute attribute = described.get(entry.getKey());
      boolean secret = attribute != null && attribute.password() || secret(entry.getKey());
      out.append(separator).append("        ").append(string(entry.getKey())).append(": ")
          .append(secret ? string(REDACTED) : value(entry.getValue()));
      separator = ",\n";
    }
    out.append(effective.isEmpty() ? "},\n" : "\n      },\n");
    out.append("      \"setKeys\": ").append(list(configured.keySet().stream()
        .filter(key -> !ConfigurationKeys.framework(key)).sorted().toList())).append(",\n");
    // keys that the metatype does not describe: a misspelling, ignored by the component
    out.append("      \"unknownKeys\": ").append(list(described.isEmpty() ? List.of() : configured.keySet().stream()
        .filter(key -> !described.containsKey(key) && !ConfigurationKeys.framework(key)).sorted().toList()));
    out.append("\n    }");
  }

  /** @return whether the key names a secret value (a token, a password, a key), rather than where one is kept */
  static boolean secret(String key) {
    String[] words = key.toLowerCase().split("[._\\-]");
    boolean secretWord = false;
    for (String word : words) {
      secretWord |= SECRET_WORD.matcher(word).matches();
    }
    return secretWord && !PLACE_WORDS.contains(words[words.length - 1]);
  }

  private static String list(List<String> items) {
    return items.stream().map(Configz::string).reduce((a, b) -> a + ", " + b).map(s -> "[" + s + "]").orElse("[]");
  }

  private static String value(Object value) {
    if (value == null) {
      return "null";
    }
    if (value instanceof Number || value instanceof Boolean) {
      return value.toString();
    }
    if (value.getClass().isArray()) {
      StringBuilder out = new StringBuilder("[");
      for (int i = 0; i < Array.getLength(value); i++) {
        out.append(i == 0 ? "" : ", ").append(value(Array.get(value, i)));
      }
      return out.append(']').toString();
    }
    if (value instanceof Collection<?> collection) {
      return value(collection.toArray());
    }
    return string(value.toString());
  }

  static String string(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }
}
