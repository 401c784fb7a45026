package dev.nodelet.launcher;

import java.io.IOException;
import java.io.PrintStream;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The configurations the launcher sets itself ({@code dev.nodelet.kube}, {@code dev.nodelet.dra.grpc}) with the
 * keys of {@code etc/<pid>.cfg} over them: a file overrides single keys, and deleting it brings the launcher's values
 * back. FileInstall leaves these files to the launcher (its filter excludes them), which reads them each second.
 * The effective configuration is printed once per change, with secret values shown as {@code ***}.
 */
final class EtcOverrides {

  /** Keys whose values are never printed. */
  private static final Pattern SECRET_KEY = Pattern.compile("(?i).*(token|password|passphrase|secret|key\\.data"
      + "|credential).*");

  interface Target {
    void configure(String pid, Map<String, Object> properties) throws Exception;
  }

  private final Path etc;
  private final Map<String, Map<String, Object>> launcherValues;
  private final Target target;
  private final PrintStream out;
  /** The content last applied per PID: null for none (the launcher's values alone). */
  private final Map<String, String> applied = new HashMap<>();

  EtcOverrides(Path etc, Map<String, Map<String, Object>> launcherValues, Target target, PrintStream out) {
    this.etc = etc;
    this.launcherValues = launcherValues;
    this.target = target;
    this.out = out;
  }

  /** A FileInstall filter (a regular expression on file names) that leaves the launcher's PIDs' files out. */
  static String fileInstallFilter(Iterable<String> pids) {
    StringBuilder names = new StringBuilder();
    for (String pid : pids) {
      names.append(names.length() == 0 ? "" : "|").append(Pattern.quote(pid + ".cfg"));
    }
    return names.length() == 0 ? ".*" : "^(?!(" + names + ")$).*";
  }

  /** The launcher's values merged with the files there are now; to configure before the bundles start. */
  Map<String, Map<String, Object>> initial() {
    Map<String, Map<String, Object>> effective = new LinkedHashMap<>();
    for (String pid : launcherValues.keySet()) {
      String content = read(pid);
      applied.put(pid, content);
      Map<String, Object> merged = merge(pid, content);
      effective.put(pid, merged);
      print(pid, merged, content != null);
    }
    return effective;
  }

  /** Applies every file that changed, appeared or went since the last call. */
  void poll() {
    for (String pid : launcherValues.keySet()) {
      String content = read(pid);
      if (java.util.Objects.equals(content, applied.get(pid))) {
        continue;
      }
      applied.put(pid, content);
      Map<String, Object> merged = merge(pid, content);
      try {
        target.configure(pid, merged);
        print(pid, merged, content != null);
      } catch (Exception e) {
        out.println("nodelet: cannot apply " + file(pid) + ": " + e.getMessage());
      }
    }
  }

  private Path file(String pid) {
    return etc.resolve(pid + ".cfg");
  }

  private String read(String pid) {
    try {
      return Files.isRegularFile(file(pid)) ? Files.readString(file(pid), StandardCharsets.UTF_8) : null;
    } catch (IOException e) {
      return null;
    }
  }

  private Map<String, Object> merge(String pid, String content) {
    Map<String, Object> merged = new LinkedHashMap<>(launcherValues.get(pid));
    if (content != null) {
      Properties file = new Properties();
      try (Reader reader = new java.io.StringReader(content)) {
        file.load(reader);
      } catch (IOException e) {
        throw new IllegalStateException(e); // a StringReader does not fail
      }
      file.stringPropertyNames().forEach(key -> merged.put(key, file.getProperty(key).trim()));
    }
    return merged;
  }

  private void print(String pid, Map<String, Object> merged, boolean fromFile) {
    String values = new TreeMap<>(merged).entrySet().stream()
        .map(e -> e.getKey() + "=" + (SECRET_KEY.matcher(e.getKey()).matches() ? "***" : e.getValue()))
        .collect(Collectors.joining(", "));
    out.println("nodelet: configuration " + pid + ": " + values + (fromFile
        ? " (the launcher's values with " + file(pid) + " over them)" : " (the launcher's values)"));
  }
}
