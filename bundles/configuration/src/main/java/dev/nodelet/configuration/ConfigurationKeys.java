package dev.nodelet.configuration;

import java.lang.annotation.Annotation;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keys a configuration may hold, and a warning, once per key, for each one it holds that no component reads: a
 * misspelt key would otherwise be ignored without a word and its default silently stay in force. The known keys
 * are those of the {@code @ObjectClassDefinition} interface, named as Declarative Services and bnd's metatype name
 * them ({@code _} for {@code .}, ...), so the check and the metatype never disagree.
 */
public final class ConfigurationKeys {

  private static final Logger LOG = LoggerFactory.getLogger(ConfigurationKeys.class);

  /**
   * Keys the framework, Config Admin, FileInstall, Karaf or Declarative Services put into a configuration, or that
   * OSGi reserves ({@code service.*}: the PID, the factory PID, the bundle location, a service's ranking).
   */
  private static final List<String> FRAMEWORK_PREFIXES = List.of("service.", "component.", "felix.fileinstall.",
      "org.apache.karaf.features.", "osgi.ds.", ".", ":");

  private final String pid;
  private final Set<String> known;
  private final Set<String> warned = new HashSet<>(); // guarded by this
  private final List<String> warnings = new ArrayList<>(); // guarded by this

  /**
   * @param pid the configuration PID, for the warning
   * @param known every key the component reads
   */
  public ConfigurationKeys(String pid, Collection<String> known) {
    this.pid = pid;
    this.known = Set.copyOf(known);
  }

  /**
   * @param pid the configuration PID, for the warning
   * @param type the configuration type (an {@code @ObjectClassDefinition} annotation interface)
   * @param alsoKnown keys besides the type's (the component's own properties, say)
   * @return the keys of {@code type} and {@code alsoKnown}
   */
  public static ConfigurationKeys of(String pid, Class<?> type, String... alsoKnown) {
    Set<String> keys = new HashSet<>(keysOf(type));
    keys.addAll(Arrays.asList(alsoKnown));
    return new ConfigurationKeys(pid, keys);
  }

  /** @return the keys this configuration may hold, sorted */
  public Set<String> known() {
    return new TreeSet<>(known);
  }

  /**
   * Warns once for each key of {@code properties} that is neither known nor the framework's own (see
   * {@link #framework}), naming the PID, the key and the nearest known key.
   *
   * @param properties the component's properties, as Declarative Services gives them
   * @return the warnings given by this call; empty if none or each was given before
   */
  public List<String> check(Map<String, ?> properties) {
    List<String> warnings = properties.keySet().stream().filter(key -> !known.contains(key) && !framework(key))
        .sorted().filter(this::firstTime).map(this::warning).toList();
    warnings.forEach(LOG::warn);
    synchronized (this) {
      this.warnings.addAll(warnings);
    }
    return warnings;
  }

  /** @return every warning given so far, oldest first */
  public synchronized List<String> warnings() {
    return List.copyOf(warnings);
  }

  private synchronized boolean firstTime(String key) {
    return warned.add(key);
  }

  private String warning(String key) {
    // a factory configuration a~b comes from the file a-b.cfg
    String file = "etc/" + pid.replace('~', '-') + ".cfg";
    return "Configuration " + pid + ": unknown key " + key + " is ignored; " + nearest(key, known)
        .map(near -> "did you mean " + near + "? (" + file + ")")
        .orElseGet(() -> "known keys: " + String.join(", ", known()) + " (" + file + ")");
  }

  /**
   * @param key a key of a configuration
   * @return whether the framework put it there or reads it (the PID, the file it came from, a reference's
   *     {@code <name>.target} filter), rather than the component
   */
  public static boolean framework(String key) {
    return key.endsWith(".target") && key.length() > ".target".length()
        || FRAMEWORK_PREFIXES.stream().anyMatch(key::startsWith);
  }

  /**
   * @param key an unknown key
   * @param known the known keys
   * @return the known key nearest to {@code key} (by edit distance), if one is near enough to be a misspelling
   */
  public static Optional<String> nearest(String key, Collection<String> known) {
    return known.stream()
        .map(candidate -> Map.entry(candidate, distance(key.toLowerCase(), candidate.toLowerCase())))
        .filter(e -> e.getValue() <= Math.max(2, Math.min(key.length(), e.getKey().length()) / 3))
        .min(Comparator.<Map.Entry<String, Integer>>comparingInt(Map.Entry::getValue)
            .thenComparing(Map.Entry::getKey))
        .map(Map.Entry::getKey);
  }

  /** The optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
  static int distance(String a, String b) {
    int[][] d = new int[a.length() + 1][b.length() + 1];
    for (int i = 0; i <= a.length(); i++) {
      d[i][0] = i;
    }
    for (int j = 0; j <= b.length(); j++) {
      d[0][j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
        if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
          d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.length()][b.length()];
  }

  /**
   * The keys of a configuration type, by the rules of Declarative Services (OSGi Compendium 112.8.2.2), which bnd
   * follows for the metatype: {@code $$} is {@code $}, {@code $_$} is {@code -}, another {@code $} goes, {@code __}
   * is {@code _} and {@code _} is {@code .}; a {@code PREFIX_} constant comes first; the {@code value()} of a
   * single-element annotation is named after the annotation.
   *
   * @param type the configuration type
   * @return its keys; empty for a type that is not an annotation or interface
   */
  public static Set<String> keysOf(Class<?> type) {
    if (!type.isInterface()) {
      return Set.of();
    }
    String prefix = prefix(type);
    List<Method> methods = Arrays.stream(type.getMethods())
        .filter(m -> m.getParameterCount() == 0 && !Modifier.isStatic(m.getModifiers()))
        .filter(m -> m.getDeclaringClass() != Object.class && m.getDeclaringClass() != Annotation.class)
        .toList();
    boolean singleElement = type.isAnnotation() && methods.size() == 1 && methods.get(0).getName().equals("value");
    return methods.stream()
        .map(m -> prefix + (singleElement ? singleElementName(type.getSimpleName()) : key(m.getName())))
        .collect(Collectors.toUnmodifiableSet());
  }

  private static String prefix(Class<?> type) {
    try {
      Field field = type.getField("PREFIX_");
      return Modifier.isStatic(field.getModifiers()) && field.getType() == String.class
          ? (String) field.get(null) : "";
    } catch (NoSuchFieldException | IllegalAccessException e) {
      return "";
    }
  }

  /** A method name as a key. */
  static String key(String name) {
    StringBuilder key = new StringBuilder(name.length());
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c == '$') {
        if (name.startsWith("$$", i)) {
          key.append('$');
          i++;
        } else if (name.startsWith("$_$", i)) {
          key.append('-');
          i += 2;
        }
        // a lone $ goes
      } else if (c == '_') {
        if (name.startsWith("__", i)) {
          key.append('_');
          i++;
        } else {
          key.append('.');
        }
      } else {
        key.append(c);
      }
    }
    return key.toString();
  }

  /** {@code MyConfig} is {@code my.config}. */
  private static String singleElementName(String simpleName) {
    StringBuilder key = new StringBuilder();
    for (int i = 0; i < simpleName.length(); i++) {
      char c = simpleName.charAt(i);
      if (Character.isUpperCase(c) && i > 0) {
        key.append('.');
      }
      key.append(Character.toLowerCase(c));
    }
    return key.toString();
  }
}
