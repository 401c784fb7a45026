package dev.nodelet.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Measure 13's parts that need no launcher: the probe of a process, and the rows of runs that failed. */
class ProcessHarnessTest {

  @Test
  void aRunThatFailedGivesItsReasonInEveryRow() {
    ProcessHarness.Run launcher = ProcessHarness.Run.failed("nodelet", 5000,
        new IllegalStateException("nodelet ended with status 1 before it was ready"));
    ProcessHarness.Run informers = ProcessHarness.Run.failed("informers", 5000,
        new IllegalStateException("informers not ready after 10 minutes"));

    List<Row> rows = ProcessHarness.rows(List.<ProcessHarness.Run[]>of(new ProcessHarness.Run[] {launcher, informers}),
        List.of("-XX:+UseSerialGC"), 60);

    // five rows for the count, and the kubelet's reference row
    assertThat(rows).hasSize(6);
    assertThat(rows.subList(0, 5)).allSatisfy(r -> {
      assertThat(r.nodelet()).contains("ended with status 1");
      assertThat(r.baseline()).contains("not ready after 10 minutes");
    });
  }

  @Test
  void probesThisProcessThreadsAndCpu() {
    ProcessProbe probe = new ProcessProbe(ProcessHandle.current().pid());

    Map<String, Integer> threads = probe.threads();

    assertThat(ProcessProbe.count(threads)).isGreaterThanOrEqualTo(Thread.activeCount());
    assertThat(threads).containsKey("Finalizer");
    assertThat(probe.cpuSeconds()).isPositive();
  }
}
