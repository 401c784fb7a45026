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
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Writes the results table into a Markdown file between {@value #BEGIN} and {@value #END}, keeping the hand-written
 * text around it (or creating the file).
 */
final class Report {

  static final String BEGIN = "<!-- results:begin (written by dev.nodelet.benchmarks.Main) -->";
  static final String END = "<!-- results:end -->";

  private Report() {
  }

  static void write(Settings settings, List<Row> rows, Duration took, String args) {
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
    table.append("| # | benchmark | Nodelet | baseline | target | met? |\n");
    table.append("| --- | --- | --- | --- | --- | --- |\n");
    for (Row row : rows) {
      table.append("| ").append(row.measure()).append(" | ").append(cell(row.benchmark())).append(" | ")
          .append(cell(row.nodelet())).append(" | ").append(cell(row.baseline())).append(" | ")
          .append(cell(row.target())).append(" | ").append(row.met()).append(" |\n");
    }
    table.append("\n").append(END);
    try {
      Path out = settings.out();
      String text;
      if (Files.exists(out)) {
        String old = Files.readString(out, StandardCharsets.UTF_8);
        int b = old.indexOf(BEGIN);
        int e = old.indexOf(END);
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
