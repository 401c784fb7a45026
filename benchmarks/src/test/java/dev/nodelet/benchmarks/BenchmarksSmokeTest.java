package dev.nodelet.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * CI's smoke run: every benchmark once, one short iteration, so that they keep compiling and running. Never judges
 * speed: it checks only that each measure ran and produced its rows.
 */
class BenchmarksSmokeTest {

  @Test
  void everyBenchmarkRunsOnce() throws Exception {
    Path out = Path.of("target", "smoke", "benchmarks.md");
    // measure 13 starts the packaged launcher and a baseline JVM (about 45 s even in smoke mode): run by hand
    LinkedHashSet<Integer> measures = new LinkedHashSet<>(Main.ORDER);
    measures.remove(ProcessHarness.MEASURE);
    Settings settings = new Settings(true, measures, out, Path.of("target", "smoke"), Optional.empty());

    List<Row> rows = Main.run(settings);
    Report.write(settings, rows, java.time.Duration.ZERO, "--smoke");

    assertThat(rows).noneMatch(r -> Main.FAILED.equals(r.met()));
    assertThat(rows).extracting(Row::measure).containsOnly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
        PodStartupHarness.MEASURE, DraRestartHarness.MEASURE);
    assertThat(rows).filteredOn(r -> r.measure() == 3).hasSize(6);
    assertThat(rows).filteredOn(r -> r.measure() == 5).hasSize(2);
    assertThat(rows).filteredOn(r -> r.measure() == 6).hasSize(2);
    assertThat(rows).filteredOn(r -> r.measure() == 7).hasSize(2);
    // an in-process driver, then a kubelet plugin over gRPC on unix sockets
    assertThat(rows).filteredOn(r -> r.measure() == DraRestartHarness.MEASURE).hasSize(4);
    assertThat(rows).filteredOn(r -> r.measure() == 8).hasSize(2);
    assertThat(rows).filteredOn(r -> r.measure() == 9).hasSize(2);
    // five clients, over TLS and plain HTTP
    assertThat(rows).filteredOn(r -> r.measure() == TransportHarness.MEASURE).hasSize(10);
    assertThat(rows).filteredOn(r -> r.measure() == 2).hasSize(6);
    assertThat(rows).filteredOn(r -> r.measure() == RestartHarness.MEASURE).hasSize(4);
    // the client counted its restarts: every one of the 20 watches was cut by the stop
    assertThat(rows).filteredOn(r -> r.measure() == RestartHarness.MEASURE
        && r.benchmark().startsWith("watches re-established")).singleElement()
        .satisfies(r -> assertThat(Long.parseLong(r.nodelet().replaceAll("^\\d+ \\((\\d+)\\).*", "$1")))
            .isGreaterThanOrEqualTo(20));
    assertThat(rows).filteredOn(r -> r.measure() == BudgetHarness.MEASURE).hasSize(3);
    // pods as bundles: 10 pods at once, 5 paced, 10 ConfigMap edits (about 9 s)
    assertThat(rows).filteredOn(r -> r.measure() == PodStartupHarness.MEASURE).hasSize(3);
    assertThat(Files.readString(out)).contains("| 1 |", "| 6 |", Report.END);
  }
}
