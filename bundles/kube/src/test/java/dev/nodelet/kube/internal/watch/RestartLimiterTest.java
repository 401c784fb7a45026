package dev.nodelet.kube.internal.watch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
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
}
