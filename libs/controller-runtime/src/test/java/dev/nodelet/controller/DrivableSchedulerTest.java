package dev.nodelet.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class DrivableSchedulerTest {

  private final DrivableScheduler time = new DrivableScheduler();
  private final List<String> ran = new ArrayList<>();

  @Test
  void runsDueTasksInOrderOfDueTimeThenOfSchedulingAndOnlyThose() {
    long start = time.nanoTime();
    time.schedule(() -> ran.add("c@3"), Duration.ofSeconds(3));
    time.schedule(() -> ran.add("a@1"), Duration.ofSeconds(1));
    time.schedule(() -> ran.add("b@1"), Duration.ofSeconds(1));
    time.schedule(() -> ran.add("d@5"), Duration.ofSeconds(5));
    assertThat(time.pendingDelays()).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(1),
        Duration.ofSeconds(3), Duration.ofSeconds(5));
    time.advance(Duration.ofSeconds(4));
    assertThat(ran).containsExactly("a@1", "b@1", "c@3");
    assertThat(time.nanoTime() - start).isEqualTo(Duration.ofSeconds(4).toNanos());
    assertThat(time.pendingDelays()).containsExactly(Duration.ofSeconds(1));
  }

  @Test
  void aTaskSeesItsDueTimeAndATaskItSchedulesWithinTheStepRunsToo() {
    long start = time.nanoTime();
    List<Long> seen = new ArrayList<>();
    time.schedule(() -> {
      seen.add(time.nanoTime() - start);
      time.schedule(() -> seen.add(time.nanoTime() - start), Duration.ofSeconds(2));
    }, Duration.ofSeconds(1));
    time.advance(Duration.ofSeconds(10));
    assertThat(seen).containsExactly(Duration.ofSeconds(1).toNanos(), Duration.ofSeconds(3).toNanos());
  }

  @Test
  void aCancelledTaskDoesNotRunAndZeroDelayRunsAtRunDue() {
    Scheduler.Task task = time.schedule(() -> ran.add("cancelled"), Duration.ofSeconds(1));
    task.cancel();
    task.cancel();
    time.schedule(() -> ran.add("now"), Duration.ZERO);
    time.schedule(() -> ran.add("negative"), Duration.ofSeconds(-1));
    assertThat(ran).isEmpty();
    time.runDue();
    assertThat(ran).containsExactly("now", "negative");
    time.advance(Duration.ofSeconds(2));
    assertThat(ran).containsExactly("now", "negative");
    assertThat(time.pending()).isZero();
  }

  @Test
  void timeDoesNotGoBack() {
    assertThatThrownBy(() -> time.advance(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("PT-1S");
  }
}
