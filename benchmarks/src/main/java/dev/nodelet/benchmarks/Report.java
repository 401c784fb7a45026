package dev.nodelet.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Writes the results table into a Markdown file between {@value #BEGIN} and {@value #END}, keeping the hand-written
 * text around it (or creating the file). A run of some measures only ({@code --only}) replaces the rows of those
 * measures and keeps the others' rows and the text above the table, adding a line that names the run; a smoke run
 * writes a table of its own, marked as such.
 */
final class Report {

  static final String BEGIN = "<!-- results:begin (written by dev.nodelet.benchmarks.Main) -->";
  static final String END = "<!-- results:end -->";
  static final String HEADER = "| # | benchmark | Nodelet | baseline | target | met? |\n| --- | --- | --- | --- | --- | --- |\n";

  private Report() {
  }

  static void write(Settings settings, List<Row> rows, Duration took, String args) {
    try {
      Path out = settings.out();
      String old = Files.exists(out) ? Files.readString(out, StandardCharsets.UTF_8) : null;
      int b = old == null ? -1 : old.indexOf(BEGIN);
      int e = old == null ? -1 : old.indexOf(END);
      // smoke figures mean nothing: they never replace measured rows
      boolean partial = !settings.smoke() && !settings.measures().containsAll(Main.ORDER);
      String table = partial && b >= 0 && e > b && old.substring(b, e).contains(HEADER)
          ? merged(old.substring(b + BEGIN.length(), e), settings, rows, took, args)
          : whole(settings, rows, took, args);
      String text;
      if (old != null) {
        text = b >= 0 && e > b ? old.substring(0, b) + table + old.substring(e + END.length())
            : old + "\n" + table + "\n";
      } else {
        if (out.toAbsolutePath().getParent() != null) {
          Files.createDirectories(out.toAbsolutePath().getParent());
        }
        text = "# Benchmarks\n\n" + table + "\n";
      }
      Files.writeString(out, text, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + settings.out(), e);
    }
  }

  /** The old table with the rows of the measures run replaced in place (new measures at the end). */
  private static String merged(String old, Settings settings, List<Row> rows, Duration took, String args) {
    int header = old.indexOf(HEADER);
    String measures = settings.measures().stream().sorted().map(String::valueOf).collect(Collectors.joining(", "));
    String prefix = "- Measures " + measures + " on ";
    StringBuilder table = new StringBuilder(BEGIN).append("\n\n");
    // the line of an earlier run of the same measures gives way to this run's
    old.substring(0, header).strip().lines().filter(l -> !l.startsWith(prefix))
        .forEach(l -> table.append(l).append("\n"));
    table.append(prefix).append(LocalDate.now()).append(" (`java -jar benchmarks/target/benchmarks.jar ")
        .append(args).append("`, ").append(took.toMinutes()).append(" min ").append(took.toSecondsPart())
        .append(" s, load average ").append(loadAverage()).append("): their rows below\n\n").append(HEADER);
    Set<Integer> written = new HashSet<>();
    for (String line : old.substring(header + HEADER.length()).lines().toList()) {
      if (!line.startsWith("| ")) {
        continue;
      }
      int measure = measure(line);
      if (!settings.measures().contains(measure)) {
        table.append(line).append("\n");
      } else if (written.add(measure)) {
        rows.stream().filter(r -> r.measure() == measure).forEach(r -> table.append(row(r)).append("\n"));
      }
    }
    rows.stream().filter(r -> !written.contains(r.measure())).forEach(r -> table.append(row(r)).append("\n"));
    return table.append("\n").append(END).toString();
  }

  /** The 1-minute load average at the end of the run, or "unknown" where the system does not say. */
  private static String loadAverage() {
    double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    return load < 0 ? "unknown" : String.format(Locale.ROOT, "%.1f", load);
  }

  private static int measure(String row) {
    try {
      return Integer.parseInt(row.substring(2, row.indexOf(" |", 2)).trim());
    } catch (RuntimeException e) {
      return -1;
    }
  }

  private static String whole(Settings settings, List<Row> rows, Duration took, String args) {
    StringBuilder table = new StringBuilder();
    table.append(BEGIN).append("\n\n");
    table.append("Measured ").append(LocalDate.now()).append(settings.smoke() ? " in **smoke mode** (one short "
        + "iteration, figures meaningless)" : "").append(", in ").append(took.toMinutes()).append(" min ")
        .append(took.toSecondsPart()).append(" s.\n\n");
    table.append("- Machine: ").append(machine()).append("\n");
    table.append("- JDK: ").append(System.getProperty("java.vm.name")).append(' ')
        .append(System.getProperty("java.runtime.version")).append(" (").append(System.getProperty("java.vendor"))
        .append("), default GC and heap (max ").append(Runtime.getRuntime().maxMemory() >> 20).append(" MiB)\n");
    table.append("- Command: `java -jar benchmarks/target/benchmarks.jar").append(args.isEmpty() ? "" : " " + args)
        .append("`\n\n");
    table.append(HEADER);
    for (Row row : rows) {
      table.append(row(row)).append("\n");
    }
    return table.append("\n").append(END).toString();
  }

  private static String row(Row row) {
    return "| " + row.measure() + " | " + cell(row.benchmark()) + " | " + cell(row.nodelet()) + " | "
        + cell(row.baseline()) + " | " + cell(row.target()) + " | " + row.met() + " |";
  }

  private static String cell(String text) {
    return text.replace("|", "\\|");
  }

  static String machine() {
    String cpu = "unknown CPU";
    try (Stream<String> lines = Files.lines(Path.of("/proc/cpuinfo"))) {
      cpu = lines.filter(l -> l.startsWith("model name")).findFirst()
          .map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse(cpu);
    } catch (IOException | UncheckedIOException e) {
      // not Linux: the CPU stays unnamed
    }
    long memory = -1;
    if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
      memory = os.getTotalMemorySize() >> 30;
    }
    return String.format(Locale.ROOT, "%s, %d cores available to the JVM, %s GiB RAM, %s %s %s", cpu,
        Runtime.getRuntime().availableProcessors(), memory < 0 ? "?" : Long.toString(memory),
        System.getProperty("os.name"), System.getProperty("os.version"), System.getProperty("os.arch"));
  }
}
