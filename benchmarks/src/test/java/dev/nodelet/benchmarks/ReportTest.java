package dev.nodelet.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportTest {

  @TempDir Path temp;

  @Test
  void aRunOfSomeMeasuresReplacesTheirRowsAndKeepsTheOthersAndTheTextAroundTheTable() throws Exception {
    Path out = temp.resolve("benchmarks.md");
    Files.writeString(out, "# Benchmarks\n\nIntro.\n\n" + Report.BEGIN + "\n\nMeasured by hand.\n\n" + Report.HEADER
        + "| 1 | get | 30 ns | — | — | — |\n| 7 | claims | old p99 | — | ≤ 50 ms | yes |\n"
        + "| 14 | pods | 1 s | — | ≤ 1 s | yes |\n\n" + Report.END + "\n\nAfter the table.\n");
    Settings only7 = new Settings(false, Set.of(7), out, temp, Optional.empty());
    List<Row> rows = List.of(new Row(7, "claims", "new p50", "—", "—", "—"),
        new Row(7, "claims", "new p99", "—", "≤ 50 ms", "yes"));

    Report.write(only7, rows, Duration.ofSeconds(12), "--only 7");
    Report.write(only7, rows, Duration.ofSeconds(12), "--only 7");

    String text = Files.readString(out);
    assertThat(text).startsWith("# Benchmarks\n\nIntro.\n\n").endsWith(Report.END + "\n\nAfter the table.\n")
        .contains("Measured by hand.", "| 1 | get | 30 ns |", "| 14 | pods | 1 s |")
        .doesNotContain("old p99");
    assertThat(text.indexOf("| 1 | get")).isLessThan(text.indexOf("new p50"));
    assertThat(text.indexOf("new p50")).isLessThan(text.indexOf("new p99"));
    assertThat(text.indexOf("new p99")).isLessThan(text.indexOf("| 14 | pods"));
    assertThat(text.lines().filter(l -> l.startsWith("- Measures 7 on "))).as("one line per run of the same measures")
        .singleElement().asString().contains("`java -jar benchmarks/target/benchmarks.jar --only 7`");
  }

  @Test
  void aRunOfEveryMeasureWritesTheWholeTable() throws Exception {
    Path out = temp.resolve("benchmarks.md");
    Files.writeString(out, Report.BEGIN + "\n" + Report.HEADER + "| 1 | get | old | — | — | — |\n" + Report.END);
    Report.write(new Settings(false, Set.copyOf(Main.ORDER), out, temp, Optional.empty()),
        List.of(new Row(3, "register", "new", "—", "—", "—")), Duration.ofMinutes(9), "");

    assertThat(Files.readString(out)).contains("| 3 | register | new |").doesNotContain("| 1 | get | old |");
  }
}
