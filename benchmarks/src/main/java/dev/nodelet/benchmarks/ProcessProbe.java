package dev.nodelet.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What an operator sees of another JVM process on Linux: its resident set from {@code /proc/PID/smaps_rollup}, its CPU
 * time from {@code /proc/PID/stat}, its threads from {@code /proc/PID/task/*}{@code /comm}, and, through {@code jcmd},
 * its heap and its Native Memory Tracking summary (the process must run with
 * {@code -XX:NativeMemoryTracking=summary}).
 */
final class ProcessProbe {

  /** Clock ticks per second of {@code /proc/PID/stat}'s times: 100 on every Linux the JDK supports. */
  private static final double TICKS_PER_SECOND = 100;

  private static final Pattern CATEGORY = Pattern.compile(
      "^-\\s+([A-Za-z][A-Za-z ]*?) \\(reserved=(\\d+)KB, committed=(\\d+)KB\\)");
  private static final Pattern TOTAL = Pattern.compile("^Total: reserved=(\\d+)KB, committed=(\\d+)KB");
  private static final Pattern STACK = Pattern.compile("\\(stack: reserved=(\\d+)KB, committed=(\\d+)KB\\)");
  private static final Pattern CLASSES = Pattern.compile("^\\(classes #(\\d+)\\)");
  private static final Pattern HEAP = Pattern.compile("total (\\d+)K, used (\\d+)K");

  /**
   * Memory of the process, in KiB.
   *
   * @param rss VmRSS (resident set), from smaps_rollup's {@code Rss}
   * @param pss proportional set size (shared pages divided among their users), -1 where not available
   * @param heapUsed the heap in use (live and not yet collected), from {@code GC.heap_info}
   * @param nmtCommitted committed memory per Native Memory Tracking category ({@code Java Heap}, {@code Class},
   *     {@code Thread}, {@code Code}, {@code GC}, ...), plus {@code Total} and {@code Thread stacks}, and the number of
   *     loaded classes as {@code classes}
   */
  record Memory(long rss, long pss, long heapUsed, Map<String, Long> nmtCommitted) {

    long committed(String category) {
      return nmtCommitted.getOrDefault(category, -1L);
    }
  }

  private final long pid;
  private final Path java;

  ProcessProbe(long pid) {
    this.pid = pid;
    this.java = Path.of(System.getProperty("java.home"), "bin");
  }

  /** utime + stime of the whole process so far, in seconds. */
  double cpuSeconds() {
    String stat = read(Path.of("/proc", Long.toString(pid), "stat"));
    // the command name (field 2) may hold spaces: count the fields after its closing parenthesis
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" +");
    return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / TICKS_PER_SECOND;
  }

  /** Live threads by name ({@code comm}, at most 15 characters), digits folded to {@code #}, most frequent first. */
  Map<String, Integer> threads() {
    Map<String, Integer> byName = new TreeMap<>();
    try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path task : tasks.toList()) {
        try {
          String name = Files.readString(task.resolve("comm"), StandardCharsets.UTF_8).trim()
              .replaceAll("[0-9]+", "#");
          byName.merge(name, 1, Integer::sum);
        } catch (IOException e) {
          // the thread ended while listed
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the threads of process " + pid, e);
    }
    return byName;
  }

  static int count(Map<String, Integer> threads) {
    return threads.values().stream().mapToInt(Integer::intValue).sum();
  }

  /** {@code name ×n, ...}, the largest pools first. */
  static String pools(Map<String, Integer> threads) {
    return threads.entrySet().stream()
        .sorted(Map.Entry.<String, Integer>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
        .map(e -> e.getKey() + " ×" + e.getValue()).collect(Collectors.joining(", "));
  }

  Memory memory() {
    long rss = -1;
    long pss = -1;
    Path rollup = Path.of("/proc", Long.toString(pid), "smaps_rollup");
    for (String line : read(rollup).split("\n")) {
      if (line.startsWith("Rss:")) {
        rss = kib(line);
      } else if (line.startsWith("Pss:")) {
        pss = kib(line);
      }
    }
    Map<String, Long> nmt = new TreeMap<>();
    String summary = jcmd("VM.native_memory", "summary");
    for (String line : summary.split("\n")) {
      String trimmed = line.trim();
      Matcher total = TOTAL.matcher(trimmed);
      Matcher category = CATEGORY.matcher(trimmed);
      Matcher stack = STACK.matcher(trimmed);
      Matcher classes = CLASSES.matcher(trimmed);
      if (total.find()) {
        nmt.put("Total", Long.parseLong(total.group(2)));
      } else if (category.find()) {
        nmt.put(category.group(1).trim(), Long.parseLong(category.group(3)));
      } else if (stack.find()) {
        nmt.put("Thread stacks", Long.parseLong(stack.group(2)));
      } else if (classes.find()) {
        nmt.put("classes", Long.parseLong(classes.group(1)));
      }
    }
    if (!nmt.containsKey("Total")) {
      throw new IllegalStateException("no Native Memory Tracking summary from process " + pid
          + " (was it started with -XX:NativeMemoryTracking=summary?): " + summary);
    }
    long heapUsed = 0;
    for (String line : jcmd("GC.heap_info").split("\n")) {
      Matcher heap = HEAP.matcher(line);
      if (heap.find() && !line.contains("Metaspace") && !line.contains("class space")) {
        heapUsed += Long.parseLong(heap.group(2));
      }
    }
    return new Memory(rss, pss, heapUsed, nmt);
  }

  /** Runs {@code jcmd PID command...} and returns its output. */
  String jcmd(String... command) {
    List<String> line = new ArrayList<>(List.of(java.resolve("jcmd").toString(), Long.toString(pid)));
    line.addAll(List.of(command));
    try {
      Process process = new ProcessBuilder(line).redirectErrorStream(true).start();
      String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
        process.destroyForcibly();
        throw new IllegalStateException(String.join(" ", line) + " failed: " + out);
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + String.join(" ", line), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static final Pattern LOADER = Pattern.compile("\\+-- (\\S+)");
  private static final Pattern LOADED = Pattern.compile("\\((\\d+) (hidden )?class(es)?\\)");
  private static final Pattern CLASS = Pattern.compile("(?:Classes: |^[ |]+)([a-z][\\w$]*(?:\\.[\\w$]+)+)");

  /**
   * The classes each class loader holds, from {@code jcmd PID VM.classloaders show-classes}, as lines of the count
   * and the loader, named by the package its classes most often share (a bundle's loader holds its own classes),
   * the largest first; JDK reflection loaders are summed.
   */
  static String classesPerLoader(String tree) {
    Map<String, Integer> byLoader = new TreeMap<>();
    Map<String, Integer> same = new TreeMap<>();
    String loader = null;
    Map<String, Integer> packages = new TreeMap<>();
    int classes = 0;
    for (String line : (tree + "\n+-- end").split("\n")) {
      Matcher start = LOADER.matcher(line);
      if (start.find()) {
        if (loader != null && classes > 0) {
          String name = loader.startsWith("jdk.internal.reflect") || packages.isEmpty() ? loader
              : packages.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey() + " ("
              + loader.substring(loader.lastIndexOf('.') + 1) + ")";
          int n = same.merge(name, 1, Integer::sum);
          byLoader.merge(n == 1 || name.startsWith("jdk.internal.reflect") ? name : name + " #" + n, classes,
              Integer::sum);
        }
        loader = start.group(1);
        packages.clear();
        classes = 0;
        continue;
      }
      Matcher count = LOADED.matcher(line);
      if (count.find()) {
        classes += Integer.parseInt(count.group(1));
        continue;
      }
      Matcher type = CLASS.matcher(line);
      if (type.find() && !type.group(1).startsWith("jdk.proxy")) {
        packages.merge(type.group(1).substring(0, type.group(1).lastIndexOf('.')), 1, Integer::sum);
      }
    }
    int total = byLoader.values().stream().mapToInt(Integer::intValue).sum();
    return total + " classes\n" + byLoader.entrySet().stream()
        .sorted(Map.Entry.<String, Integer>comparingByValue().reversed())
        .map(e -> e.getValue() + " " + e.getKey()).collect(Collectors.joining("\n")) + "\n";
  }

  private static long kib(String line) {
    return Long.parseLong(line.replaceAll("[^0-9]", ""));
  }

  private static String read(Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file + " (Linux's /proc is needed)", e);
    }
  }
}
