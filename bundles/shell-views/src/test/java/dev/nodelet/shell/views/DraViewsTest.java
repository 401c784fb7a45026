package dev.nodelet.shell.views;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.dra.DriverStatus;
import dev.nodelet.dra.DriverStatus.State;
import dev.nodelet.dra.SliceSummary;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DraViewsTest {

  @Test
  void noDriversAndNoSlicesPrintTheHeadersOnly() {
    assertThat(DraViews.drivers(List.of()).lines())
        .containsExactly("DRIVER  STATE  LAST-SNAPSHOT  BACKOFF  GRACE-LEFT  LAST-ERROR");
    assertThat(DraViews.slices(List.of()).lines()).containsExactly("NAME  DRIVER  POOL  GENERATION  DEVICES");
  }

  @Test
  void slicesAreOneLineEachInPaddedColumns() {
    String name = "node-a-gpu.example.com-x7k2p";
    assertThat(DraViews.slices(List.of(new SliceSummary(name, "gpu.example.com", "pool-a", 1, 3))).lines())
        .containsExactly(
            String.format("%-" + (name.length() + 2) + "s%-17s%-8s%-12s%s", "NAME", "DRIVER", "POOL", "GENERATION",
                "DEVICES"),
            String.format("%-" + (name.length() + 2) + "s%-17s%-8s%-12s%s", name, "gpu.example.com", "pool-a", "1",
                "3"));
  }

  @Test
  void driversShowDurationsInSecondsAndErrorsOnOneLine() {
    Instant snapshot = Instant.parse("2026-01-02T03:04:05Z");
    List<String> lines = DraViews.drivers(List.of(
        new DriverStatus("gpu.example.com", State.STOPPED, Optional.of(snapshot),
            Optional.of("java.lang.IllegalStateException: stream\nbroke"), Duration.ZERO, Duration.ZERO),
        new DriverStatus("nic.example.com", State.LEAVING, Optional.empty(), Optional.empty(),
            Duration.ofMillis(1500), Duration.ofMillis(29_250)))).lines().toList();
    assertThat(lines).hasSize(3);
    assertThat(lines.get(1).split("\\s+", 6)).containsExactly("gpu.example.com", "STOPPED", snapshot.toString(), "-",
        "-", "java.lang.IllegalStateException: stream broke");
    assertThat(lines.get(2).split("\\s+", 6)).containsExactly("nic.example.com", "LEAVING", "never", "1.5s", "29.25s",
        "-");
  }
}
