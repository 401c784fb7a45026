package dev.nodelet.kube.internal.watch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The restart bucket against a clock the test drives: the verdicts do not depend on the machine's speed. */
class RestartLimiterTest {

  private static final long SECOND = 1_000_000_000L;

  @Test
  void fiveThousandRestartsAtOnceNeverExceedTheRateInAnyWindow() {
    AtomicLong now = new AtomicLong(42 * SECOND);
    Random random = new Random(7);
    double rate = 400;
    int burst = 100;
    RestartLimiter limiter = new RestartLimiter(rate, burst, now::get, random::nextDouble);

    long[] starts = new long[5_000];
    for (int i = 0; i < starts.length; i++) {
      starts[i] = now.get() + limiter.reserve(0);
    }
    Arrays.sort(starts);

    // the bucket's promise: over any window of w seconds at most burst + rate * w + 1 starts
    for (double window : new double[] {0.01, 0.1, 0.5, 1, 5}) {
      long w = (long) (window * SECOND);
      int most = 0;
      int first = 0;
      for (int last = 0; last < starts.length; last++) {
        while (starts[last] - starts[first] >= w) {
          first++;
        }
        most = Math.max(most, last - first + 1);
      }
      assertThat(most).as("starts within %s s", window).isLessThanOrEqualTo((int) (burst + rate * window + 1));
    }
    // and it spreads them: 5,000 at 400/s take about 12 s, not longer
    assertThat(starts[starts.length - 1] - 42 * SECOND).isBetween(12 * SECOND - SECOND, 12 * SECOND + SECOND);
    assertThat(limiter.reservations()).isEqualTo(5_000);
  }

  @Test
  void aBurstStartsWithinOneIntervalAndIdleTimeRefillsTheBucket() {
    AtomicLong now = new AtomicLong();
    RestartLimiter limiter = new RestartLimiter(10, 5, now::get, () -> 0.5);
    long interval = SECOND / 10;
    for (int i = 0; i < 5; i++) {
      assertThat(limiter.reserve(0)).isEqualTo(interval / 2); // the jitter only
    }
    assertThat(limiter.reserve(0)).isEqualTo(interval + interval / 2);

    now.addAndGet(10 * SECOND); // idle: the bucket is full again
    for (int i = 0; i < 5; i++) {
      assertThat(limiter.reserve(0)).isEqualTo(interval / 2);
    }
  }

  @Test
  void aMinimumDelayIsKeptAndTheTokenIsTakenThen() {
    AtomicLong now = new AtomicLong();
    RestartLimiter limiter = new RestartLimiter(10, 1, now::get, () -> 0);
    assertThat(limiter.reserve(3 * SECOND)).isEqualTo(3 * SECOND);
    assertThat(limiter.reserve(0)).isEqualTo(3 * SECOND + SECOND / 10);
  }

  @Test
  void startsThatRunLateTogetherAreSentWithinTheBucketAndTheRestReserveAgain() {
    AtomicLong now = new AtomicLong(0);
    Random random = new Random(11);
    double rate = 400;
    int burst = 100;
    RestartLimiter limiter = new RestartLimiter(rate, burst, now::get, random::nextDouble);
    // 5,000 restarts reserved at once; then the callbacks stall from 2 s to 3 s: every start due meanwhile runs at 3 s
    long stallFrom = 2 * SECOND;
    long stallTo = 3 * SECOND;
    PriorityQueue<long[]> due = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
    for (int i = 0; i < 5_000; i++) {
      due.add(new long[] {limiter.reserve(0)});
    }
    long[] sent = new long[5_000];
    int count = 0;
    int runs = 0;
    while (!due.isEmpty()) {
      long at = due.poll()[0];
      now.set(at >= stallFrom && at < stallTo ? stallTo : at);
      runs++;
      long wait = limiter.tryStart();
      if (wait == 0) {
        sent[count++] = now.get();
      } else {
        due.add(new long[] {now.get() + limiter.reserve(wait)});
      }
    }

    assertThat(count).isEqualTo(5_000);
    assertThat(limiter.refused()).as("the late starts that reserved again").isPositive().isEqualTo(runs - 5_000L);
    // a second of starts arrived at once at 3 s, yet no window holds more than the bucket allows
    Arrays.sort(sent);
    for (double window : new double[] {0.001, 0.1, 0.5, 1, 5}) {
      assertThat(most(sent, (long) (window * SECOND))).as("sent within %s s", window)
          .isLessThanOrEqualTo((int) (burst + rate * window + 1));
    }
    // the stall costs about its own length, not more: 5,000 at 400/s are sent by about 12.5 s + 1 s
    assertThat(sent[sent.length - 1]).isLessThan(14 * SECOND + SECOND / 2);
  }

  @Test
  void startsOnTimeAreAllSentAtOnce() {
    AtomicLong now = new AtomicLong(0);
    RestartLimiter limiter = new RestartLimiter(400, 100, now::get, new Random(3)::nextDouble);
    long[] slots = new long[2_000];
    for (int i = 0; i < slots.length; i++) {
      slots[i] = limiter.reserve(0);
    }
    Arrays.sort(slots);
    for (long slot : slots) {
      now.set(slot);
      assertThat(limiter.tryStart()).isZero();
    }
    assertThat(limiter.refused()).isZero();
  }

  /** The most of the sorted times that fall within any window of {@code w} nanoseconds. */
  static int most(long[] times, long w) {
    int most = 0;
    int first = 0;
    for (int last = 0; last < times.length; last++) {
      while (times[last] - times[first] >= w) {
        first++;
      }
      most = Math.max(most, last - first + 1);
    }
    return most;
  }
}
