package dev.nodelet.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** One stream of one source followed on drivable time: retries, back-off, stale attempts, stop. */
class StreamMonitorTest {

  private final DrivableScheduler time = new DrivableScheduler();
  private final List<StreamMonitor.Attempt> attempts = new ArrayList<>();
  private final AtomicInteger closed = new AtomicInteger();
  private final List<String> events = new ArrayList<>();
  private final StreamMonitor.Events recorder = new StreamMonitor.Events() {
    @Override
    public void failed(StreamMonitor monitor, Throwable cause, boolean retryable) {
      events.add("failed " + cause.getMessage() + (retryable ? " retryable" : " for good"));
    }

    @Override
    public void ended(StreamMonitor monitor) {
      events.add("ended");
    }
  };

  /** A source that records each attempt and hands out a handle that counts its closes. */
  private StreamMonitor.Builder builder(Scheduler scheduler) {
    return StreamMonitor.builder("gpu.example.com", "test stream of gpu.example.com", attempt -> {
      attempts.add(attempt);
      return closed::incrementAndGet;
    }, scheduler).events(recorder);
  }

  private StreamMonitor.Attempt last() {
    return attempts.get(attempts.size() - 1);
  }

  private static RuntimeException broken(String why) {
    return new IllegalStateException(why);
  }

  @Test
  void theFirstRetryGoesAtOnceThenEachWaitsTheDelayOfTheOneBefore() {
    Backoff backoff = Backoff.exponential(Duration.ofSeconds(5), Duration.ofSeconds(20)).build();
    StreamMonitor monitor = builder(time).backoff(backoff).firstRetryAtOnce().build();
    monitor.start();
    assertThat(monitor.state()).isEqualTo(StreamMonitor.State.FOLLOWING);
    List<Duration> delays = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      last().failed(broken("down"), true);
      assertThat(monitor.state()).isEqualTo(StreamMonitor.State.BACKING_OFF);
      delays.add(monitor.backoff());
      time.advance(monitor.backoff());
    }
    assertThat(delays).containsExactly(Duration.ZERO, Duration.ofSeconds(5), Duration.ofSeconds(10),
        Duration.ofSeconds(20), Duration.ofSeconds(20));
    assertThat(attempts).hasSize(6);
    assertThat(closed).as("each failed stream's handle is closed").hasValue(5);
    assertThat(events).hasSize(5).allMatch(e -> e.equals("failed down retryable"));
    monitor.stop();
  }

  @Test
  void byDefaultEveryFailureWaitsItsDelayAndAFailureToOpenIsOne() {
    AtomicInteger opens = new AtomicInteger();
    StreamMonitor monitor = StreamMonitor.builder("gpu.example.com", "test stream", attempt -> {
      opens.incrementAndGet();
      throw broken("connection refused");
    }, time).events(recorder).build();
    monitor.start();
    for (int i = 0; i < 3; i++) {
      assertThat(time.pendingDelays()).containsExactly(Duration.ofSeconds(5));
      time.advance(Duration.ofSeconds(5));
    }
    assertThat(opens).hasValue(4);
    assertThat(events).hasSize(4).allMatch(e -> e.equals("failed connection refused retryable"));
    monitor.stop();
    assertThat(time.pending()).as("stop cancels the retry").isZero();
  }

  @Test
  void callbacksOfAnEarlierAttemptAreIgnored() {
    StreamMonitor monitor = builder(time).build();
    monitor.start();
    StreamMonitor.Attempt first = last();
    first.failed(broken("down"), true);
    time.advance(Duration.ofSeconds(5));
    StreamMonitor.Attempt second = last();
    assertThat(second).isNotSameAs(first);

    assertThat(first.delivered()).isFalse();
    first.failed(broken("late"), true);
    first.completed();
    assertThat(events).containsExactly("failed down retryable");
    assertThat(time.pending()).isZero();
    assertThat(second.isCurrent()).isTrue();
    assertThat(second.delivered()).isTrue();
    assertThat(monitor.state()).isEqualTo(StreamMonitor.State.FOLLOWING);
    monitor.stop();
  }

  @Test
  void aNonRetryableFailureOrACleanEndStopsTheMonitorAndClosesTheStream() {
    StreamMonitor unimplemented = builder(time).build();
    unimplemented.start();
    last().failed(broken("Unimplemented"), false);
    assertThat(unimplemented.state()).isEqualTo(StreamMonitor.State.STOPPED);
    assertThat(closed).hasValue(1);

    StreamMonitor completing = builder(time).build();
    completing.start();
    last().completed();
    assertThat(completing.state()).isEqualTo(StreamMonitor.State.STOPPED);
    assertThat(closed).hasValue(2);

    assertThat(events).containsExactly("failed Unimplemented for good", "ended");
    assertThat(time.pending()).isZero();
    assertThat(attempts).hasSize(2);
  }

  @Test
  void stopClosesTheStreamAndNothingIsReportedAfterIt() {
    StreamMonitor monitor = builder(time).build();
    monitor.start();
    StreamMonitor.Attempt attempt = last();
    monitor.stop();
    monitor.stop();
    assertThat(closed).as("closed once").hasValue(1);
    assertThat(attempt.delivered()).isFalse();
    attempt.failed(broken("late"), true);
    attempt.completed();
    assertThat(events).isEmpty();
    assertThat(time.pending()).isZero();
    assertThat(monitor.state()).isEqualTo(StreamMonitor.State.STOPPED);
  }

  @Test
  void aStreamThatFailsInsideOpenHasItsHandleClosedAndIsRetried() {
    StreamMonitor monitor = StreamMonitor.builder("gpu.example.com", "test stream", attempt -> {
      attempts.add(attempt);
      if (attempts.size() == 1) {
        attempt.failed(broken("at once"), true);
      }
      return closed::incrementAndGet;
    }, time).events(recorder).build();
    monitor.start();
    assertThat(closed).hasValue(1);
    assertThat(time.pendingDelays()).containsExactly(Duration.ofSeconds(5));
    time.advance(Duration.ofSeconds(5));
    assertThat(attempts).hasSize(2);
    assertThat(last().isCurrent()).isTrue();
    monitor.stop();
    assertThat(closed).hasValue(2);
  }

  @Test
  void aFailureWhileTheSchedulerClosesStopsTheMonitorInsteadOfThrowing() {
    Scheduler closing = new Scheduler() {
      @Override
      public long nanoTime() {
        return time.nanoTime();
      }

      @Override
      public Task schedule(Runnable task, Duration delay) {
        throw new RejectedExecutionException("closed");
      }
    };
    StreamMonitor monitor = builder(closing).build();
    monitor.start();
    last().failed(broken("down"), true);
    assertThat(monitor.state()).isEqualTo(StreamMonitor.State.STOPPED);
    assertThat(closed).hasValue(1);
  }
}
