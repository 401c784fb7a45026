package dev.nodelet.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class ExecutorSchedulerTest {

  @Test
  void runsTasksOnItsThreadSurvivesAFailingTaskAndCloseLeavesNoThread() throws Exception {
    CountDownLatch ran = new CountDownLatch(1);
    ExecutorScheduler scheduler = new ExecutorScheduler("executor-scheduler-test");
    scheduler.schedule(() -> {
      throw new IllegalStateException("a failing task is logged");
    }, Duration.ZERO);
    String[] thread = new String[1];
    scheduler.schedule(() -> {
      thread[0] = Thread.currentThread().getName();
      ran.countDown();
    }, Duration.ofMillis(1));
    Scheduler.Task never = scheduler.schedule(() -> {
      throw new AssertionError("cancelled");
    }, Duration.ofHours(1));
    never.cancel();
    assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(thread[0]).isEqualTo("executor-scheduler-test");
    scheduler.close();
    scheduler.close();
    assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().equals("executor-scheduler-test"));
    assertThatThrownBy(() -> scheduler.schedule(() -> { }, Duration.ZERO))
        .isInstanceOf(RejectedExecutionException.class);
  }

  @Test
  void onAnExecutorOfTheCallerCloseLeavesTheExecutorRunning() throws Exception {
    ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor();
    try {
      ExecutorScheduler scheduler = ExecutorScheduler.on(executor, "test");
      scheduler.close();
      CountDownLatch ran = new CountDownLatch(1);
      scheduler.schedule(ran::countDown, Duration.ZERO);
      assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
    } finally {
      executor.shutdownNow();
    }
  }
}
